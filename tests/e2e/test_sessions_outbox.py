"""Logins on both paths (``walletd up`` and gunicorn + workers over PostgreSQL/RabbitMQ) with
nothing configured for delivery: codes land in ``<data dir>/outbox`` and the log says where."""

from __future__ import annotations

import time
from email import message_from_bytes, policy
from pathlib import Path

from bip_utils import Base58Decoder
from turnkey_sdk_types import (
    CreateReadWriteSessionBody,
    GetWhoamiBody,
    InitOtpAuthBody,
    OtpAuthBody,
    StampLoginBody,
)

from infra.crypto import hpke
from tests.support.deployment import Deployment, Key
from tests.support.keys import make_key
from tests.support.mailboxes import code_in
from tests.support.raw_api import RawApi, create_sub_org, root_user_params


def _outbox_email(dep: Deployment, to: str, timeout: float = 10.0) -> tuple[Path, str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in sorted((Path(dep.env["WALLETD_DATA_DIR"]) / "outbox").glob("*.eml"),
                           key=lambda p: p.stat().st_mtime, reverse=True):
            msg = message_from_bytes(path.read_bytes(), policy=policy.default)
            if str(msg["To"]) == to:
                body = msg.get_body(preferencelist=("plain",))
                assert body is not None
                return path, str(body.get_content())
        time.sleep(0.1)
    raise AssertionError(f"no outbox email to {to}")


def _logs(dep: Deployment) -> str:
    return "\n".join(p.read_text(errors="replace") for p in Path(dep.workdir).glob("*.log"))


def _key(private: bytes, org: str, user: str) -> Key:
    public = hpke.compressed(hpke.private_key_from_bytes(private).public_key()).hex()
    return Key(org, user, public, private.hex())


def test_otp_auth_through_the_outbox_then_sessions(deployment: Deployment) -> None:
    email = f"outbox-{time.time_ns()}@example.com"
    owner = make_key()
    api = RawApi(deployment, deployment.root, deployment.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "outbox", users=[root_user_params("ob", owner, userEmail=email)])
    user_id = result["rootUserIds"][0]
    parent = deployment.client(organization_id=sub_id)
    init = parent.init_otp_auth(InitOtpAuthBody(otpType="OTP_TYPE_EMAIL", contact=email,
                                                appName="Outbox App"))
    path, text = _outbox_email(deployment, email)
    code = code_in(text)
    logs = _logs(deployment)
    assert str(path) in logs and code not in logs
    embedded = hpke.generate_private_key()
    target = hpke.uncompressed(embedded.public_key()).hex()
    auth = parent.otp_auth(OtpAuthBody(otpId=init.otpId, otpCode=code, targetPublicKey=target))
    raw = Base58Decoder.CheckDecode(auth.credentialBundle)
    session = deployment.client(_key(hpke.open_sealed(raw[:33], raw[33:], embedded),
                                     sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id

    login_key = make_key()
    stamped = session.stamp_login(StampLoginBody(publicKey=login_key.public_key))
    assert stamped.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    logged_in = deployment.client(Key(sub_id, user_id, login_key.public_key,
                                      login_key.private_key))
    rw = logged_in.create_read_write_session(CreateReadWriteSessionBody(targetPublicKey=target))
    raw = Base58Decoder.CheckDecode(rw.credentialBundle)
    assert deployment.client(_key(hpke.open_sealed(raw[:33], raw[33:], embedded), sub_id,
                                  user_id)).get_whoami(GetWhoamiBody()).userId == user_id
