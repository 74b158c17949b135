"""Verification tokens, their uses, client signatures and the code store (SQLite, no sockets)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from sqlalchemy.orm import Session

from infra.bootstrap import Services, bootstrap
from infra.clock import now
from infra.crypto import hpke
from infra.db.migrate import upgrade
from infra.db.models.organizations import Organization
from infra.db.models.sessions import OtpCode
from infra.errors import InvalidRequest, ResourceExhausted, Unauthenticated
from infra.sessions import otp
from infra.sessions.service_keys import PUBLIC_CACHE, VERIFICATION_TOKEN
from infra.sessions.verification import (
    ClientSignature,
    issue_token,
    record_token_use,
    verify_client_signature,
    verify_token,
)
from infra.settings import Settings
from infra.worker_services import service_keys
from tests.support.keys import make_key


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[Services]:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path)})
    upgrade(settings.effective_database_url)
    PUBLIC_CACHE.clear()
    services = bootstrap(settings, "worker")
    try:
        yield services
    finally:
        services.engine.dispose()


@pytest.fixture
def session(worker: Services) -> Iterator[Session]:
    with worker.session_factory() as s:
        s.add(Organization(id="org-1", name="org"))
        s.commit()
        yield s


def _token(worker: Services, session: Session, public_key: str = "", seconds: int = 60) -> str:
    return issue_token(session, service_keys(worker), organization_id="org-1", otp_id="otp-1",
                       verification_type="OTP_TYPE_EMAIL", contact="a@example.com",
                       public_key=public_key, seconds=seconds, now=now())


def test_a_token_verifies_until_it_expires(worker: Services, session: Session) -> None:
    token = _token(worker, session, seconds=60)
    assert verify_token(session, token, now()).contact == "a@example.com"
    with pytest.raises(Unauthenticated, match="expired"):
        verify_token(session, token, now() + timedelta(seconds=61))


def test_a_token_signed_by_another_key_or_tampered_is_refused(worker: Services,
                                                             session: Session) -> None:
    claims = jwt.decode(_token(worker, session), options={"verify_signature": False})
    forged = jwt.encode(claims, hpke.generate_private_key(), algorithm="ES256")
    with pytest.raises(Unauthenticated, match="does not verify"):
        verify_token(session, forged, now())
    header, _, signature = _token(worker, session).split(".")
    other = jwt.encode({**claims, "contact": "b@example.com"}, hpke.generate_private_key(),
                       algorithm="ES256").split(".")[1]
    with pytest.raises(Unauthenticated):
        verify_token(session, f"{header}.{other}.{signature}", now())


def test_tokens_of_a_rotated_key_keep_verifying(worker: Services, session: Session) -> None:
    token = _token(worker, session)
    service_keys(worker).add_version(session, VERIFICATION_TOKEN)
    assert verify_token(session, token, now()).organization_id == "org-1"


def test_one_login_and_one_signup_per_token(worker: Services, session: Session) -> None:
    token_id = verify_token(session, _token(worker, session), now()).id
    record_token_use(session, token_id, "signup", "sha256:a", now())
    record_token_use(session, token_id, "login", "sha256:b", now())
    record_token_use(session, token_id, "login", "sha256:b", now())  # the same request again
    with pytest.raises(Unauthenticated, match="already used for a login"):
        record_token_use(session, token_id, "login", "sha256:c", now())
    with pytest.raises(Unauthenticated, match="already used for a signup"):
        record_token_use(session, token_id, "signup", "sha256:d", now())


def _signature(key_private: str, message: dict[str, object]) -> str:
    private = hpke.private_key_from_bytes(bytes.fromhex(key_private))
    r, s = decode_dss_signature(private.sign(json.dumps(message).encode(),
                                             ec.ECDSA(hashes.SHA256())))
    return (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()


def test_client_signature_binds_key_token_usage_and_session_key(worker: Services,
                                                              session: Session) -> None:
    client, other = make_key(), make_key()
    claims = verify_token(session, _token(worker, session, client.public_key), now())
    good = {"login": {"publicKey": "02ab"}, "tokenId": claims.id, "type": "USAGE_TYPE_LOGIN"}

    def signed(key: object, message: dict[str, object]) -> ClientSignature:
        return ClientSignature(public_key=key.public_key,  # type: ignore[attr-defined]
                               scheme="CLIENT_SIGNATURE_SCHEME_API_P256",
                               message=json.dumps(message),
                               signature=_signature(key.private_key, message))  # type: ignore[attr-defined]

    verify_client_signature(signed(client, good), token=claims, usage="login",
                            expected={"login": {"publicKey": "02ab"}})
    cases = [
        (signed(other, good), "not the key"),
        (signed(client, {**good, "tokenId": "other"}), "tokenId"),
        (signed(client, {**good, "type": "USAGE_TYPE_SIGNUP"}), "USAGE_TYPE_LOGIN"),
        (signed(client, {**good, "login": {"publicKey": "03cd"}}), "does not match"),
    ]
    for signature, message in cases:
        with pytest.raises(Unauthenticated, match=message):
            verify_client_signature(signature, token=claims, usage="login",
                                    expected={"login": {"publicKey": "02ab"}})
    tampered = signed(client, good).model_copy(update={"message": json.dumps(
        {**good, "login": {"publicKey": "03cd"}})})
    with pytest.raises(Unauthenticated, match="does not verify"):
        verify_client_signature(tampered, token=claims, usage="login",
                                expected={"login": {"publicKey": "03cd"}})


def test_codes_are_hashed_spent_and_limited(worker: Services, session: Session) -> None:
    keys = service_keys(worker)
    moment = now()

    def issue() -> tuple[OtpCode, str]:
        return otp.issue(session, keys, organization_id="org-1", purpose="otp",
                         otp_type="OTP_TYPE_EMAIL", contact="c@example.com", user_id=None,
                         length=9, alphanumeric=True, expiration_seconds=300, now=moment)

    row, code = issue()
    assert code not in row.code_hash and len(row.code_hash) == 64
    issue()
    issue()
    with pytest.raises(ResourceExhausted, match="Max number of OTPs have been initiated"):
        issue()
    with pytest.raises(InvalidRequest, match="Invalid OTP code"):
        otp.consume(session, keys, organization_ids=["org-1"], otp_id=row.id, purpose="otp",
                    code="WRONGCODE", now=moment)
    used = otp.consume(session, keys, organization_ids=["org-1"], otp_id=row.id, purpose="otp",
                       code=code.lower(), now=moment)
    assert used.used_at is not None and used.attempts == 2
    with pytest.raises(InvalidRequest, match="Invalid OTP code"):  # used codes are dead
        otp.consume(session, keys, organization_ids=["org-1"], otp_id=row.id, purpose="otp",
                    code=code, now=moment)
    late, late_code = otp.issue(session, keys, organization_id="org-1", purpose="otp",
                                otp_type="OTP_TYPE_EMAIL", contact="d@example.com", user_id=None,
                                length=6, alphanumeric=False, expiration_seconds=1, now=moment)
    with pytest.raises(InvalidRequest, match="Invalid OTP code"):  # expired
        otp.consume(session, keys, organization_ids=["org-1"], otp_id=late.id, purpose="otp",
                    code=late_code, now=moment + timedelta(seconds=2))
