"""MFA steps from a test: an email verification token, and an approval stamped with it.

``verification_token``: ``init_otp`` (email) → the emailed code → ``verify_otp`` with the code
encrypted to the enclave bundle and bound to ``client_key`` (the ``@turnkey/core`` way), as the
official ``turnkey-http`` client sends them. ``attested_approve``: ``approve_activity`` stamped
``X-Stamp-Attested`` by ``client_key`` with that token (an EMAIL_OTP step).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import requests
from turnkey_sdk_types import InitOtpBody, VerifyOtpBody

from infra.crypto import bundles
from tests.support.deployment import Deployment
from tests.support.keys import TestKey
from tests.support.mailboxes import Mailbox, code_in, text_part
from tests.support.raw_api import envelope


def verification_token(dep: Deployment, client: Any, box: Mailbox, email: str,
                       client_key: TestKey) -> str:
    discovery = requests.get(dep.base_url + "/public/v1/discovery/keys", timeout=10).json()
    init = client.init_otp(InitOtpBody(otpType="OTP_TYPE_EMAIL", contact=email, appName="App"))
    target = bundles.verify_signed_bundle(init.otpEncryptionTargetBundle,
                                          discovery["verificationTokenPublicKey"])
    code = code_in(text_part(box.last_to(email)))
    encrypted = bundles.encrypt_to_bundle(
        json.dumps({"otp_code": code, "public_key": client_key.public_key}).encode(),
        target["targetPublic"])
    return str(client.verify_otp(VerifyOtpBody(otpId=init.otpId,
                                               encryptedOtpBundle=encrypted)).verificationToken)


def attested_approve(dep: Deployment, organization_id: str, client_key: TestKey, token: str,
                     fingerprint: str) -> requests.Response:
    body = envelope("ACTIVITY_TYPE_APPROVE_ACTIVITY", organization_id, {"fingerprint": fingerprint})
    stamp = {"publicKeyAttestation": token, "scheme": "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN",
             "publicKey": client_key.public_key, "signature": client_key.sign(body)}
    header = base64.urlsafe_b64encode(json.dumps(stamp).encode()).decode().rstrip("=")
    return dep.post("/public/v1/submit/approve_activity", body,
                    {"Content-Type": "application/json", "X-Stamp-Attested": header})
