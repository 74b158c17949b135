"""Logins with the official ``turnkey-http`` client: stamp_login, read-write sessions, OTP auth.

The walletd under test delivers mail to a real SMTP server on loopback (aiosmtpd) and SMS to
a local Twilio-style API; the tests read the codes from what those received.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from bip_utils import Base58Decoder
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from turnkey_http.generated.client import TurnkeyNetworkError
from turnkey_sdk_types import (
    CreateReadWriteSessionBody,
    CreateWalletBody,
    EmailAuthBody,
    GetWhoamiBody,
    InitOtpAuthBody,
    InitOtpBody,
    OtpAuthBody,
    OtpLoginBody,
    RecoverUserBody,
    StampLoginBody,
    VerifyOtpBody,
)

from infra.crypto import bundles, hpke
from tests.support.deployment import Deployment, Key
from tests.support.interop import unavailable
from tests.support.keys import TestKey as StampKey
from tests.support.keys import make_key
from tests.support.mailboxes import Mailbox, SmsApi, code_in, html_part, start_smtp, text_part
from tests.support.raw_api import RawApi, create_sub_org, envelope, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator

ACCOUNTS = [{"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
             "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]


@pytest.fixture(scope="module")
def mailbox_env() -> Iterator[tuple[Mailbox, SmsApi, dict[str, str]]]:
    controller, box, port = start_smtp()
    sms = SmsApi().start()
    env = {"WALLETD_SMTP_URL": f"smtp://127.0.0.1:{port}",
           "WALLETD_EMAIL_FROM": "Wallet App <login@wallet.example>",
           "WALLETD_SMS_URL": sms.url, "WALLETD_SMS_ACCOUNT_SID": sms.sid,
           "WALLETD_SMS_AUTH_TOKEN": sms.token, "WALLETD_SMS_FROM": "+15550000000"}
    yield box, sms, env
    controller.stop()
    sms.stop()


@pytest.fixture(scope="module")
def logins(tmp_path_factory: pytest.TempPathFactory,
           mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> Iterator[Deployment]:
    dep = Deployment.embedded(tmp_path_factory.mktemp("logins"), mailbox_env[2])
    yield dep
    dep.stop()


def _jwt_claims(token: str) -> dict[str, object]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def _verify_session_jwt(token: str, notarizer_hex: str) -> None:
    header, payload, signature = token.split(".")
    raw = base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    digest = hashlib.sha256(f"{header}.{payload}".encode()).digest()
    hpke.load_public_key(notarizer_hex).verify(der, digest, ec.ECDSA(hashes.SHA256()))


def _discovery(dep: Deployment) -> dict[str, str]:
    import requests

    response = requests.get(dep.base_url + "/public/v1/discovery/keys", timeout=10)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def _open_bundle(bundle: str, embedded: ec.EllipticCurvePrivateKey) -> bytes:
    raw = Base58Decoder.CheckDecode(bundle)
    return hpke.open_sealed(raw[:33], raw[33:], embedded)


def _key_of(private: bytes, org: str, user: str) -> Key:
    public = hpke.compressed(hpke.private_key_from_bytes(private).public_key()).hex()
    return Key(org, user, public, private.hex())


def _session_key(test_key: StampKey, org: str, user: str) -> Key:
    return Key(org, user, test_key.public_key, test_key.private_key)


def test_stamp_login_session_stamps_whoami_and_create_wallet(logins: Deployment) -> None:
    owner = make_key()
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(api, "stamp login",
                                       users=[root_user_params("stamper", owner)])
    user_id = result["rootUserIds"][0]
    client = logins.client(_session_key(owner, sub_id, user_id))
    session_key = make_key()
    response = client.stamp_login(StampLoginBody(publicKey=session_key.public_key,
                                                 expirationSeconds="600"))
    assert response.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    claims = _jwt_claims(response.session)
    assert claims["public_key"] == session_key.public_key
    assert claims["user_id"] == user_id and claims["organization_id"] == sub_id
    assert claims["session_type"] == "SESSION_TYPE_READ_WRITE"
    assert abs(int(claims["exp"]) - (time.time() + 600)) < 120  # type: ignore[call-overload]
    _verify_session_jwt(response.session, _discovery(logins)["notarizerPublicKey"])

    session = logins.client(_session_key(session_key, sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id
    wallet = session.create_wallet(CreateWalletBody(walletName="from session", accounts=ACCOUNTS))
    assert wallet.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    assert wallet.addresses and wallet.addresses[0].startswith("0x")


def test_an_expired_login_key_is_refused(logins: Deployment) -> None:
    owner = make_key()
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(api, "expiry", users=[root_user_params("u", owner)])
    user_id = result["rootUserIds"][0]
    session_key = make_key()
    logins.client(_session_key(owner, sub_id, user_id)).stamp_login(
        StampLoginBody(publicKey=session_key.public_key, expirationSeconds="1"))
    time.sleep(2.1)
    with pytest.raises(TurnkeyNetworkError) as err:
        logins.client(_session_key(session_key, sub_id, user_id)).get_whoami(GetWhoamiBody())
    assert err.value.status_code == 401
    assert "expired api key" in str(err.value)


def test_invalidate_existing_removes_the_other_login_keys(logins: Deployment) -> None:
    owner = make_key()
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(api, "invalidate", users=[root_user_params("u", owner)])
    user_id = result["rootUserIds"][0]
    client = logins.client(_session_key(owner, sub_id, user_id))
    first, second = make_key(), make_key()
    client.stamp_login(StampLoginBody(publicKey=first.public_key))
    client.stamp_login(StampLoginBody(publicKey=second.public_key, invalidateExisting=True))
    with pytest.raises(TurnkeyNetworkError):
        logins.client(_session_key(first, sub_id, user_id)).get_whoami(GetWhoamiBody())
    assert logins.client(_session_key(second, sub_id, user_id)).get_whoami(
        GetWhoamiBody()).userId == user_id
    # The long-lived key the user logged in with is not a login credential: it still works.
    assert client.get_whoami(GetWhoamiBody()).userId == user_id


def test_read_write_session_bundle_opens_and_stamps(logins: Deployment) -> None:
    owner = make_key()
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(api, "rw session", users=[root_user_params("rw", owner)])
    user_id = result["rootUserIds"][0]
    embedded = hpke.generate_private_key()
    response = logins.client(_session_key(owner, sub_id, user_id)).create_read_write_session(
        CreateReadWriteSessionBody(targetPublicKey=hpke.uncompressed(embedded.public_key()).hex(),
                                   userId=user_id))
    assert response.activity.type == "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2"
    assert response.organizationId == sub_id and response.userId == user_id
    assert response.username == "rw" and response.organizationName == "rw session"
    private = _open_bundle(response.credentialBundle, embedded)
    session = logins.client(_key_of(private, sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id
    keys = RawApi(logins, owner, sub_id).read("get_api_keys", {"userId": user_id})["apiKeys"]
    (created,) = [k for k in keys if k["apiKeyId"] == response.apiKeyId]
    assert created["credential"]["type"] == "CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256"
    assert created["apiKeyName"].startswith("Read Write Session - ")
    assert created["expirationSeconds"] == "900"


def test_otp_auth_by_email_delivers_a_code_that_buys_a_session(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    box = mailbox_env[0]
    email = "otp.user@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "otp auth", users=[root_user_params("otp", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    parent = logins.client(organization_id=sub_id)
    init = parent.init_otp_auth(InitOtpAuthBody(
        otpType="OTP_TYPE_EMAIL", contact=email, appName="Wallet <App>",
        emailCustomization={"logoUrl": "https://wallet.example/logo.png"},
        replyToEmailAddress="help@wallet.example"))
    assert init.activity.type == "ACTIVITY_TYPE_INIT_OTP_AUTH_V3"
    msg = box.last_to(email)
    assert msg["Reply-To"] == "help@wallet.example"
    assert "login@wallet.example" in str(msg["From"])
    code = code_in(text_part(msg))
    assert len(code) == 9 and set(code) <= set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
    html = html_part(msg)
    assert code in html and "Wallet &lt;App&gt;" in html and "Wallet <App>" not in html
    embedded = hpke.generate_private_key()
    auth = parent.otp_auth(OtpAuthBody(
        otpId=init.otpId, otpCode=code.lower(),
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    assert auth.userId == user_id
    session = logins.client(_key_of(_open_bundle(auth.credentialBundle, embedded), sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id
    wallet = session.create_wallet(CreateWalletBody(walletName="otp wallet", accounts=ACCOUNTS))
    assert wallet.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    # A used code is dead.
    with pytest.raises(TurnkeyNetworkError, match="Invalid OTP code"):
        parent.otp_auth(OtpAuthBody(otpId=init.otpId, otpCode=code,
                                    targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))


def test_otp_auth_by_sms_uses_the_template(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    sms = mailbox_env[1]
    phone = "+15551230001"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "sms auth", users=[root_user_params("sms", make_key(), userPhoneNumber=phone)])
    parent = logins.client(organization_id=sub_id)
    sms.fail_next = 1  # one transient failure: retried
    init = parent.init_otp_auth(InitOtpAuthBody(
        otpType="OTP_TYPE_SMS", contact=phone, appName="App", otpLength=6, alphanumeric=False,
        smsCustomization={"template": "Code for App: {{.OtpCode}}"}))
    received = sms.last_to(phone)
    assert received["From"] == "+15550000000"
    assert received["Body"].startswith("Code for App: ")
    code = received["Body"].rsplit(" ", 1)[1]
    assert len(code) == 6 and code.isdigit()
    embedded = hpke.generate_private_key()
    auth = parent.otp_auth(OtpAuthBody(
        otpId=init.otpId, otpCode=code,
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    assert auth.userId == result["rootUserIds"][0]


def test_fourth_attempt_is_refused_even_with_the_right_code(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    box = mailbox_env[0]
    email = "guess@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, _ = create_sub_org(
        api, "guessing", users=[root_user_params("g", make_key(), userEmail=email)])
    parent = logins.client(organization_id=sub_id)
    init = parent.init_otp_auth(InitOtpAuthBody(otpType="OTP_TYPE_EMAIL", contact=email,
                                                appName="App"))
    code = code_in(text_part(box.last_to(email)))
    target = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
    for wrong in ("000000000", "111111111", "222222222"):
        with pytest.raises(TurnkeyNetworkError, match="Invalid OTP code"):
            parent.otp_auth(OtpAuthBody(otpId=init.otpId, otpCode=wrong, targetPublicKey=target))
    with pytest.raises(TurnkeyNetworkError, match="Invalid OTP code"):
        parent.otp_auth(OtpAuthBody(otpId=init.otpId, otpCode=code, targetPublicKey=target))


def test_at_most_three_live_codes_per_contact(logins: Deployment) -> None:
    email = "many@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, _ = create_sub_org(
        api, "many codes", users=[root_user_params("m", make_key(), userEmail=email)])
    parent = logins.client(organization_id=sub_id)
    for _ in range(3):
        parent.init_otp_auth(InitOtpAuthBody(otpType="OTP_TYPE_EMAIL", contact=email,
                                             appName="App"))
    with pytest.raises(TurnkeyNetworkError, match="Max number of OTPs have been initiated"):
        parent.init_otp_auth(InitOtpAuthBody(otpType="OTP_TYPE_EMAIL", contact=email,
                                             appName="App"))


# --- init_otp / verify_otp / otp_login / X-Stamp-Attested ---------------------------------


def _client_signature(key: StampKey, message: dict[str, object]) -> dict[str, str]:
    text = json.dumps(message, separators=(",", ":"))
    private = hpke.private_key_from_bytes(bytes.fromhex(key.private_key))
    r, s = decode_dss_signature(private.sign(text.encode(), ec.ECDSA(hashes.SHA256())))
    return {"publicKey": key.public_key, "scheme": "CLIENT_SIGNATURE_SCHEME_API_P256",
            "message": text, "signature": (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()}


def _attested(key: StampKey, token: str, body: bytes) -> str:
    stamp = {"publicKeyAttestation": token, "scheme": "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN",
             "publicKey": key.public_key, "signature": key.sign(body)}
    return base64.urlsafe_b64encode(json.dumps(stamp).encode()).decode().rstrip("=")


def _verify_with_bundle(dep: Deployment, box: Mailbox, contact: str, client_key: StampKey,
                        org: str) -> str:
    """init_otp V3 → read the email → encryptOtpCodeToBundle → verify_otp V2: the token."""
    client = dep.client(organization_id=org)
    init = client.init_otp(InitOtpBody(otpType="OTP_TYPE_EMAIL", contact=contact, appName="App"))
    assert init.activity.type == "ACTIVITY_TYPE_INIT_OTP_V3"
    target = bundles.verify_signed_bundle(init.otpEncryptionTargetBundle,
                                          _discovery(dep)["verificationTokenPublicKey"])
    assert target["targetPublic"] == _discovery(dep)["encryptionPublicKey"]
    code = code_in(text_part(box.last_to(contact)))
    encrypted = bundles.encrypt_to_bundle(
        json.dumps({"otp_code": code, "public_key": client_key.public_key}).encode(),
        target["targetPublic"])
    verified = client.verify_otp(VerifyOtpBody(otpId=init.otpId,
                                                      encryptedOtpBundle=encrypted))
    return str(verified.verificationToken)


def test_verification_token_claims_and_signature(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    client_key = make_key()
    token = _verify_with_bundle(logins, mailbox_env[0], "Claims@Example.com", client_key,
                                logins.root.organization_id)
    claims = jwt.decode(token, hpke.load_public_key(_discovery(logins)["verificationTokenPublicKey"]),
                        algorithms=["ES256"], options={"verify_exp": False})
    assert list(claims) == ["exp", "id", "organization_id", "verification_type", "contact",
                            "public_key"]
    assert isinstance(claims["exp"], str) and int(claims["exp"]) > time.time() * 1000
    assert claims["contact"] == "claims@example.com"
    assert claims["verification_type"] == "OTP_TYPE_EMAIL"
    assert claims["public_key"] == client_key.public_key
    assert claims["organization_id"] == logins.root.organization_id


def test_otp_login_v2_with_client_signature_and_single_use(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    email = "otp.login@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "otp login", users=[root_user_params("ol", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    client_key, session_key = make_key(), make_key()
    token = _verify_with_bundle(logins, mailbox_env[0], email, client_key,
                                logins.root.organization_id)
    token_id = _jwt_claims(token)["id"]
    parent = logins.client()
    signature = _client_signature(client_key, {"login": {"publicKey": session_key.public_key},
                                               "tokenId": token_id, "type": "USAGE_TYPE_LOGIN"})
    # Signed for another session key: refused.
    with pytest.raises(TurnkeyNetworkError, match="clientSignature"):
        parent.otp_login(OtpLoginBody(verificationToken=token, publicKey=make_key().public_key,
                                      clientSignature=signature))
    login = parent.otp_login(OtpLoginBody(verificationToken=token,
                                          publicKey=session_key.public_key,
                                          clientSignature=signature))
    claims = _jwt_claims(login.session)
    assert claims["organization_id"] == sub_id and claims["user_id"] == user_id
    session = logins.client(_session_key(session_key, sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id
    # A second login with the same token is refused.
    again = make_key()
    with pytest.raises(TurnkeyNetworkError, match="already used"):
        parent.otp_login(OtpLoginBody(
            verificationToken=token, publicKey=again.public_key,
            clientSignature=_client_signature(client_key, {
                "login": {"publicKey": again.public_key}, "tokenId": token_id,
                "type": "USAGE_TYPE_LOGIN"})))


def test_login_with_otp_stamps_stamp_login_with_x_stamp_attested(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    """``@turnkey/core`` ``loginWithOtp``: stamp_login to the parent, stamped by the token key."""
    email = "attested@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "attested", users=[root_user_params("at", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    client_key = make_key()
    token = _verify_with_bundle(logins, mailbox_env[0], email, client_key,
                                logins.root.organization_id)
    body = envelope("ACTIVITY_TYPE_STAMP_LOGIN", logins.root.organization_id,
                    {"publicKey": client_key.public_key, "expirationSeconds": "900"})
    headers = {"Content-Type": "application/json",
               "X-Stamp-Attested": _attested(client_key, token, body)}
    response = logins.post("/public/v1/submit/stamp_login", body, headers)
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED"
    assert activity["organizationId"] == sub_id
    session_jwt = activity["result"]["stampLoginResult"]["session"]
    claims = _jwt_claims(session_jwt)
    assert claims["organization_id"] == sub_id and claims["user_id"] == user_id
    session = logins.client(_session_key(client_key, sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id
    # The same request re-sent (Rust-style polling) is the same use: same activity.
    again = logins.post("/public/v1/submit/stamp_login", body, headers)
    assert again.status_code == 200 and again.json()["activity"]["id"] == activity["id"]
    # A new login with the same token is refused.
    body2 = envelope("ACTIVITY_TYPE_STAMP_LOGIN", logins.root.organization_id,
                     {"publicKey": client_key.public_key, "expirationSeconds": "60"})
    refused = logins.post("/public/v1/submit/stamp_login", body2, {
        "Content-Type": "application/json", "X-Stamp-Attested": _attested(client_key, token, body2)})
    assert refused.status_code == 401 and "already used" in refused.json()["message"]
    # A stamp by another key with the token is refused; so is any other activity type.
    other = make_key()
    body3 = envelope("ACTIVITY_TYPE_STAMP_LOGIN", logins.root.organization_id,
                     {"publicKey": other.public_key})
    wrong_key = logins.post("/public/v1/submit/stamp_login", body3, {
        "Content-Type": "application/json", "X-Stamp-Attested": _attested(other, token, body3)})
    assert wrong_key.status_code == 401
    body4 = envelope("ACTIVITY_TYPE_CREATE_WALLET", sub_id,
                     {"walletName": "x", "accounts": ACCOUNTS})
    wallet = logins.post("/public/v1/submit/create_wallet", body4, {
        "Content-Type": "application/json", "X-Stamp-Attested": _attested(client_key, token, body4)})
    assert wallet.status_code == 401 and "stamp_login only" in wallet.json()["message"]


def test_verify_otp_v1_with_a_wrong_code_fails_and_counts(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    contact = "+15551230002"
    sms = mailbox_env[1]
    root = RawApi(logins, logins.root, logins.root.organization_id)
    init = root.ok("init_otp", "ACTIVITY_TYPE_INIT_OTP",
                   {"otpType": "OTP_TYPE_SMS", "contact": contact, "otpLength": 7,
                    "alphanumeric": False})
    assert set(init) == {"otpId"}
    code = sms.last_to(contact)["Body"].rsplit(" ", 1)[1]
    assert len(code) == 7
    wrong = root.submit("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP",
                        {"otpId": init["otpId"], "otpCode": "0000000"})
    assert wrong.status_code == 400 and wrong.json()["message"] == "Invalid OTP code"
    key = make_key()
    token = root.ok("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP",
                    {"otpId": init["otpId"], "otpCode": code, "publicKey": key.public_key})
    assert _jwt_claims(token["verificationToken"])["contact"] == contact


# --- email auth and recovery --------------------------------------------------------------


def _link_bundle(msg: object, prefix: str) -> str:
    text = text_part(msg)  # type: ignore[arg-type]
    (line,) = [line.strip() for line in text.splitlines() if line.strip().startswith(prefix)]
    return line[len(prefix):]


def test_email_auth_magic_link_carries_a_working_bundle(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    email = "magic@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "magic", users=[root_user_params("mg", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    embedded = hpke.generate_private_key()
    response = logins.client(organization_id=sub_id).email_auth(EmailAuthBody(
        email=email, targetPublicKey=hpke.uncompressed(embedded.public_key()).hex(),
        emailCustomization={"appName": "Magic App",
                            "magicLinkTemplate": "https://app.example/auth?b=%s"},
        sendFromEmailAddress="magic@app.example", sendFromEmailSenderName="Magic"))
    assert response.userId == user_id and response.apiKeyId
    msg = mailbox_env[0].last_to(email)
    assert str(msg["From"]) == "Magic <magic@app.example>"
    bundle = _link_bundle(msg, "https://app.example/auth?b=")
    assert f'href="https://app.example/auth?b={bundle}"' in html_part(msg)
    session = logins.client(_key_of(_open_bundle(bundle, embedded), sub_id, user_id))
    assert session.get_whoami(GetWhoamiBody()).userId == user_id


def test_email_recovery_bundle_stamps_recover_user(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    email = "lost@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "recovery", users=[root_user_params("lost", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    embedded = hpke.generate_private_key()
    init = RawApi(logins, logins.root, sub_id).ok(
        "init_user_email_recovery", "ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2", {
            "email": email, "targetPublicKey": hpke.uncompressed(embedded.public_key()).hex(),
            "emailCustomization": {"appName": "Wallet",
                                   "magicLinkTemplate": "https://app.example/recover/%s"}})
    assert init == {"userId": user_id}
    bundle = _link_bundle(mailbox_env[0].last_to(email), "https://app.example/recover/")
    recovery = logins.client(_key_of(_open_bundle(bundle, embedded), sub_id, user_id))
    passkey = SoftAuthenticator()
    recovered = recovery.recover_user(RecoverUserBody(
        userId=user_id, authenticator=passkey.registration("new passkey")))
    assert recovered.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    assert RawApi(logins, passkey, sub_id).read("whoami")["userId"] == user_id


# --- nothing secret rests in the database or the logs ------------------------------------


def test_codes_and_tokens_never_reach_the_database_or_the_logs(
        logins: Deployment, mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    from tests.e2e.test_custody import _dump_database, _logs

    box, _sms, env = mailbox_env
    secrets_: dict[str, str] = {"SMS auth token": env["WALLETD_SMS_AUTH_TOKEN"]}
    api = RawApi(logins, logins.root, logins.root.organization_id)
    email = "leak.check@example.com"
    sub_id, _, result = create_sub_org(
        api, "leak check", users=[root_user_params("lc", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    parent = logins.client(organization_id=sub_id)
    # otp_auth with a wrong and then the right code.
    init = parent.init_otp_auth(InitOtpAuthBody(otpType="OTP_TYPE_EMAIL", contact=email,
                                                appName="App"))
    secrets_["otp_auth code"] = code_in(text_part(box.last_to(email)))
    target = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
    with pytest.raises(TurnkeyNetworkError):
        parent.otp_auth(OtpAuthBody(otpId=init.otpId, otpCode="ZZZZZZZZZ", targetPublicKey=target))
    parent.otp_auth(OtpAuthBody(otpId=init.otpId, otpCode=secrets_["otp_auth code"],
                                targetPublicKey=target))
    # verify_otp V1 (clear code) → otp_login V1 with the token.
    root = RawApi(logins, logins.root, logins.root.organization_id)
    first = root.ok("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3",
                    {"otpType": "OTP_TYPE_EMAIL", "contact": email, "appName": "App"})
    secrets_["verify_otp code"] = code_in(text_part(box.last_to(email)))
    client_key = make_key()
    token_v1 = root.ok("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP", {
        "otpId": first["otpId"], "otpCode": secrets_["verify_otp code"],
        "publicKey": client_key.public_key})["verificationToken"]
    secrets_["otp_login token"] = token_v1
    session_key = make_key()
    root.ok("otp_login", "ACTIVITY_TYPE_OTP_LOGIN_V2", {
        "verificationToken": token_v1, "publicKey": session_key.public_key,
        "clientSignature": _client_signature(client_key, {
            "login": {"publicKey": session_key.public_key},
            "tokenId": _jwt_claims(token_v1)["id"], "type": "USAGE_TYPE_LOGIN"})})
    # verify_otp V2 → X-Stamp-Attested stamp_login.
    attested_key = make_key()
    token_v2 = _verify_with_bundle(logins, box, email, attested_key, logins.root.organization_id)
    secrets_["attested token"] = token_v2
    body = envelope("ACTIVITY_TYPE_STAMP_LOGIN", logins.root.organization_id,
                    {"publicKey": attested_key.public_key})
    response = logins.post("/public/v1/submit/stamp_login", body, {
        "Content-Type": "application/json",
        "X-Stamp-Attested": _attested(attested_key, token_v2, body)})
    assert response.status_code == 200, response.text
    assert response.json()["activity"]["organizationId"] == sub_id

    database, logs = _dump_database(logins), _logs(logins)
    # The haystacks are real: they hold what the flows stored and logged.
    assert init.otpId in database and user_id in database and email in database
    assert "<redacted>" in database and len(logs) > 1000
    for what, secret in secrets_.items():
        assert len(secret) >= 9, what
        for where, haystack in (("database", database), ("logs", logs)):
            assert secret not in haystack, f"{what} found in {where}"
            assert secret.lower() not in haystack.lower(), f"{what} found in {where}"


# --- the official JS packages (tests/interop) ---------------------------------------------

INTEROP = Path(__file__).resolve().parents[1] / "interop"


@pytest.fixture(scope="module")
def node() -> str:
    exe, npm = shutil.which("node"), shutil.which("npm")
    if not exe or not npm:
        unavailable("node/npm not installed")
    if not (INTEROP / "node_modules" / "@turnkey" / "core").is_dir():
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=INTEROP,
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            unavailable(f"npm install failed: {done.stderr[-300:]}")
    assert exe is not None
    return exe




def _js(node: str, **request: object) -> object:
    done = subprocess.run([node, str(INTEROP / "sessions_interop.mjs")], cwd=INTEROP,
                          input=json.dumps(request), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["result"]


def test_core_otp_login_flow_with_the_official_js_packages(
        node: str, logins: Deployment,
        mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    """init_otp → encryptOtpCodeToBundle → verify_otp V2 → decodeVerificationToken /
    verifyOtpVerificationToken → getClientSignatureMessageForLogin → otp_login V2 →
    verifySessionJwtSignature; create_read_write_session → decryptCredentialBundle."""
    keys = _discovery(logins)
    email = "core.flow@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "core flow", users=[root_user_params("cf", make_key(), userEmail=email)])
    user_id = result["rootUserIds"][0]
    parent = logins.client()
    init = parent.init_otp(InitOtpBody(otpType="OTP_TYPE_EMAIL", contact=email, appName="App"))
    code = code_in(text_part(mailbox_env[0].last_to(email)))
    client_key = make_key()
    encrypted = _js(node, op="encryptOtpCodeToBundle", code=code,
                    bundle=init.otpEncryptionTargetBundle, publicKey=client_key.public_key,
                    signer=keys["verificationTokenPublicKey"])
    token = parent.verify_otp(VerifyOtpBody(otpId=init.otpId,
                                            encryptedOtpBundle=str(encrypted))).verificationToken
    decoded = _js(node, op="decodeVerificationToken", token=token)
    assert isinstance(decoded, dict)
    assert decoded["public_key"] == client_key.public_key and decoded["contact"] == email
    verified = _js(node, op="verifyOtpVerificationToken", token=token,
                   signer=keys["verificationTokenPublicKey"])
    assert isinstance(verified, dict) and verified["id"] == decoded["id"]
    refused = _js(node, op="verifyOtpVerificationToken", token=token,
                  signer=keys["notarizerPublicKey"])
    assert isinstance(refused, dict) and "signature is invalid" in refused["error"]
    session_key = make_key()
    message = _js(node, op="getClientSignatureMessageForLogin", token=token,
                  sessionPublicKey=session_key.public_key)
    assert isinstance(message, dict) and message["publicKey"] == client_key.public_key
    signature = _js(node, op="signRaw", message=message["message"],
                    publicKey=client_key.public_key, privateKey=client_key.private_key)
    login = parent.otp_login(OtpLoginBody(
        verificationToken=token, publicKey=session_key.public_key,
        clientSignature={"publicKey": client_key.public_key,
                         "scheme": "CLIENT_SIGNATURE_SCHEME_API_P256",
                         "message": message["message"], "signature": str(signature)}))
    assert _js(node, op="verifySessionJwtSignature", jwt=login.session,
               notarizer=keys["notarizerPublicKey"]) is True
    assert _js(node, op="verifySessionJwtSignature", jwt=login.session,
               notarizer=keys["verificationTokenPublicKey"]) is False
    session = logins.client(_session_key(session_key, sub_id, user_id))
    embedded = hpke.generate_private_key()
    rw = session.create_read_write_session(CreateReadWriteSessionBody(
        targetPublicKey=hpke.uncompressed(embedded.public_key()).hex()))
    opened = _js(node, op="decryptCredentialBundle", bundle=rw.credentialBundle,
                 embeddedKey=hpke.private_key_to_bytes(embedded).hex())
    assert opened == _open_bundle(rw.credentialBundle, embedded).hex()
    assert logins.client(_key_of(bytes.fromhex(str(opened)), sub_id, user_id)).get_whoami(
        GetWhoamiBody()).userId == user_id


def test_core_attested_stamper_logs_in_with_stamp_login(
        node: str, logins: Deployment,
        mailbox_env: tuple[Mailbox, SmsApi, dict[str, str]]) -> None:
    """``loginWithOtp``: core's own ``AttestedStamper`` stamps stamp_login to the parent."""
    email = "core.attested@example.com"
    api = RawApi(logins, logins.root, logins.root.organization_id)
    sub_id, _, result = create_sub_org(
        api, "core attested", users=[root_user_params("ca", make_key(), userEmail=email)])
    client_key = make_key()
    token = _verify_with_bundle(logins, mailbox_env[0], email, client_key,
                                logins.root.organization_id)
    body = envelope("ACTIVITY_TYPE_STAMP_LOGIN", logins.root.organization_id,
                    {"publicKey": client_key.public_key, "expirationSeconds": "900",
                     "invalidateExisting": True})
    stamp = _js(node, op="attestedStamp", token=token, body=body.decode(),
                publicKey=client_key.public_key, privateKey=client_key.private_key)
    assert isinstance(stamp, dict) and stamp["stampHeaderName"] == "X-Stamp-Attested"
    response = logins.post("/public/v1/submit/stamp_login", body, {
        "Content-Type": "application/json", "X-Stamp-Attested": stamp["stampHeaderValue"]})
    assert response.status_code == 200, response.text
    session_jwt = response.json()["activity"]["result"]["stampLoginResult"]["session"]
    assert _js(node, op="verifySessionJwtSignature", jwt=session_jwt,
               notarizer=_discovery(logins)["notarizerPublicKey"]) is True
    user_id = result["rootUserIds"][0]
    assert _jwt_claims(session_jwt)["organization_id"] == sub_id
    assert logins.client(_session_key(client_key, sub_id, user_id)).get_whoami(
        GetWhoamiBody()).userId == user_id


def test_the_audit_log_still_verifies_after_the_login_flows(logins: Deployment,
                                                            tmp_path: Path) -> None:
    """Spending a verification token redacts the issuing ``verify_otp`` result after it
    settled; that edit is logged (a ``redaction`` leaf), so `walletd audit verify` passes."""
    from tests.support.deployment import ROOT, WALLETD

    done = subprocess.run([*WALLETD, "audit", "verify", "--state", str(tmp_path / "s.json")],
                          env=logins.env, cwd=ROOT, text=True, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "'redaction'" in done.stdout, done.stdout
