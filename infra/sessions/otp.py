"""One-time codes: made with ``secrets``, stored as a keyed hash, 3 attempts, 3 live per contact.

A code is ``otpLength`` (6 to 9) characters of Crockford's Base32 (``alphanumeric``) or digits.
The database holds ``HMAC-SHA256(k, otp_id ‖ code)`` where ``k`` is derived (HKDF) from the
service encryption key of version ``key_version``: without the master key a dump cannot be
brute-forced offline. Comparison is constant-time (``hmac.compare_digest``).

Attempts: every verification spends one of the code's 3 attempts in the transaction that
reads the code. On PostgreSQL that is a transaction of its own (row lock, increment, commit
whether right or wrong), so N concurrent wrong guesses are N spent attempts and at most 3
are ever compared; on SQLite (one writer at a time) the activity's transaction spends it and
the lifecycle listener :func:`count_failed_attempt` spends it again in the transaction that
records a wrong guess's failure. After 3 the code is dead, even for the right code.
At most 3 live (unused, unexpired, not dead) codes per contact.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime, timedelta
from typing import Any, Final

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from infra.clock import as_utc
from infra.crypto import hpke
from infra.db.changes import Change
from infra.db.models.sessions import OtpCode
from infra.db.unit_of_work import UnitOfWork
from infra.errors import InvalidRequest, ResourceExhausted
from infra.pipeline import lifecycle
from infra.sessions.service_keys import ENCRYPTION, ServiceKeys

CROCKFORD: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
DIGITS: Final = "0123456789"
MIN_LENGTH: Final = 6
MAX_LENGTH: Final = 9
DEFAULT_LENGTH: Final = 9
DEFAULT_EXPIRATION_S: Final = 300
MAX_EXPIRATION_S: Final = 600
MAX_ATTEMPTS: Final = 3
MAX_LIVE_PER_CONTACT: Final = 3
INVALID_CODE: Final = "Invalid OTP code"
TOO_MANY: Final = "Max number of OTPs have been initiated"
#: Crockford decoding aliases: what a person may type for what was sent.
_ALIASES: Final = str.maketrans({"O": "0", "I": "1", "L": "1"})


def generate_code(length: int, alphanumeric: bool) -> str:
    """A fresh code of ``length`` characters from ``secrets``."""
    alphabet = CROCKFORD if alphanumeric else DIGITS
    return "".join(secrets.choice(alphabet) for _ in range(length))


def normalize_code(code: str, alphanumeric: bool) -> str:
    """What the person typed, as it was generated (case, dashes, Crockford aliases)."""
    text = code.strip().replace("-", "").replace(" ", "").upper()
    return text.translate(_ALIASES) if alphanumeric else text


def _hash_key(private_key_bytes: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=b"walletd otp code hash v1").derive(private_key_bytes)


def code_hash(keys: ServiceKeys, session: Session, version: int, otp_id: str, code: str) -> str:
    """``HMAC-SHA256`` of the code under the hash key of encryption key ``version``."""
    pair = next((k for k in keys.live(session, ENCRYPTION) if k.version == version), None)
    if pair is None:  # the version was retired: nothing hashed under it can match
        return ""
    key = _hash_key(hpke.private_key_to_bytes(pair.private_key))
    return hmac.new(key, f"{otp_id}:{code}".encode(), hashlib.sha256).hexdigest()


def validated_length(length: int | None, default: int) -> int:
    """``otpLength`` or the version's default; 6 to 9."""
    value = default if length is None else length
    if not MIN_LENGTH <= value <= MAX_LENGTH:
        raise InvalidRequest(f"otpLength must be from {MIN_LENGTH} to {MAX_LENGTH}",
                             field="otpLength")
    return value


def validated_expiration(seconds: str | None) -> int:
    """``expirationSeconds`` of a code: default 300, at most 600."""
    if seconds in (None, ""):
        return DEFAULT_EXPIRATION_S
    text = str(seconds)
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= MAX_EXPIRATION_S:
        raise InvalidRequest(f"expirationSeconds of a one-time code must be from 1 to "
                             f"{MAX_EXPIRATION_S}", field="expirationSeconds")
    return int(text)


def _live(organization_id: str, contact: str, now: datetime) -> Any:
    return (OtpCode.organization_id == organization_id, OtpCode.contact == contact,
            OtpCode.used_at.is_(None), OtpCode.attempts < MAX_ATTEMPTS, OtpCode.expires_at > now)


def issue(session: Session, keys: ServiceKeys, *, organization_id: str, purpose: str,
          otp_type: str, contact: str, user_id: str | None, length: int, alphanumeric: bool,
          expiration_seconds: int, now: datetime) -> tuple[OtpCode, str]:
    """Store a new code (hashed) and return the row and the code to deliver.

    Raises:
        ResourceExhausted: ``Max number of OTPs have been initiated`` (3 live for the contact).
    """
    live = session.scalar(select(func.count()).select_from(OtpCode).where(
        *_live(organization_id, contact, now)))
    if int(live or 0) >= MAX_LIVE_PER_CONTACT:
        raise ResourceExhausted(TOO_MANY)
    code = generate_code(length, alphanumeric)
    version = keys.current(session, ENCRYPTION).version
    row = OtpCode(organization_id=organization_id, purpose=purpose, otp_type=otp_type,
                  contact=contact, user_id=user_id, key_version=version, code_hash="",
                  alphanumeric=alphanumeric, attempts=0,
                  expires_at=now + timedelta(seconds=expiration_seconds))
    session.add(row)
    session.flush()
    row.code_hash = code_hash(keys, session, version, row.id, code)
    return row, code


def consume(session: Session, keys: ServiceKeys, *, organization_ids: list[str], otp_id: str,
            purpose: str, code: str, now: datetime) -> OtpCode:
    """Spend an attempt on ``otp_id`` and, if ``code`` is right, mark the code used.

    On PostgreSQL the attempt is spent in a transaction of its own that reads the code under
    a row lock, increments ``attempts`` and commits whether the guess was right or wrong:
    concurrent guesses queue on the row and each one counts, so at most
    :data:`MAX_ATTEMPTS` are ever compared. On SQLite every writer of the process already
    queues on one lock; the attempt is spent in the activity's transaction and spent again
    by :func:`count_failed_attempt` when a wrong guess fails the activity.

    Raises:
        InvalidRequest: ``Invalid OTP code`` for a wrong, unknown, expired, used or dead code
            (one message for all: nothing is learnt from the answer).
    """
    bind = session.get_bind()
    if bind.dialect.name == "postgresql":
        engine = bind if isinstance(bind, Engine) else bind.engine
        right = _guess_committed(engine, session, keys, organization_ids=organization_ids,
                                 otp_id=otp_id, purpose=purpose, code=code, now=now)
        row = session.get(OtpCode, otp_id, populate_existing=True)
        if not right or row is None:
            raise InvalidRequest(INVALID_CODE)
        return row
    spent = session.execute(
        update(OtpCode)
        .where(*_guessable(organization_ids, otp_id, purpose, now))
        .values(attempts=OtpCode.attempts + 1)
        .returning(OtpCode.id)
        .execution_options(synchronize_session=False)).first()
    row = session.get(OtpCode, otp_id, populate_existing=True)
    if not spent or row is None:
        raise InvalidRequest(INVALID_CODE)
    if not _matches(keys, session, row, code):
        raise InvalidRequest(INVALID_CODE)
    row.used_at = now
    return row


def _guessable(organization_ids: list[str], otp_id: str, purpose: str, now: datetime) -> Any:
    return (OtpCode.id == otp_id, OtpCode.organization_id.in_(organization_ids),
            OtpCode.purpose == purpose, OtpCode.used_at.is_(None),
            OtpCode.attempts < MAX_ATTEMPTS, OtpCode.expires_at > now)


def _matches(keys: ServiceKeys, session: Session, row: OtpCode, code: str) -> bool:
    expected = row.code_hash
    given = code_hash(keys, session, row.key_version, row.id,
                      normalize_code(code, row.alphanumeric))
    return bool(expected) and hmac.compare_digest(expected, given)


def _guess_committed(engine: Engine, session: Session, keys: ServiceKeys, *,
                     organization_ids: list[str], otp_id: str, purpose: str, code: str,
                     now: datetime) -> bool:
    """Lock the code's row, spend one attempt, compare, mark it used if right: one
    transaction of its own that commits either way. Whether the guess was right."""
    with Session(bind=engine, expire_on_commit=False) as own:
        with own.begin():
            row = own.scalars(select(OtpCode).where(
                *_guessable(organization_ids, otp_id, purpose, now)).with_for_update()).first()
            if row is None:
                return False
            row.attempts += 1
            right = _matches(keys, session, row, code)
            if right:
                row.used_at = now
        return right


def is_expired(row: OtpCode, now: datetime) -> bool:
    """Whether the code's lifetime is over."""
    return as_utc(row.expires_at) <= now


#: Activity types whose failure with :data:`INVALID_CODE` spends an attempt.
CODE_ACTIVITY_TYPES: Final = frozenset({
    "ACTIVITY_TYPE_VERIFY_OTP", "ACTIVITY_TYPE_VERIFY_OTP_V2", "ACTIVITY_TYPE_OTP_AUTH"})


def count_failed_attempt(uow: UnitOfWork, change: Change) -> None:
    """Activity status listener: a code activity that failed with a wrong code spends its attempt.

    The attempt spent during execution rolled back with the failed activity's effects; this
    spends it again in the transaction that records the failure.
    """
    activity, previous = change.after, change.previous
    if (activity.status != lifecycle.FAILED or previous == lifecycle.FAILED
            or activity.type not in CODE_ACTIVITY_TYPES):
        return
    if uow.session.get_bind().dialect.name == "postgresql":
        return  # the attempt was committed on its own (:func:`consume`)
    if (activity.failure or {}).get("message") != INVALID_CODE:
        return
    intent: Any = next(iter((activity.intent or {}).values()), {})
    otp_id = intent.get("otpId") if isinstance(intent, dict) else None
    if isinstance(otp_id, str):
        uow.session.execute(update(OtpCode).where(OtpCode.id == otp_id,
                                              OtpCode.attempts < MAX_ATTEMPTS)
                        .values(attempts=OtpCode.attempts + 1)
                        .execution_options(synchronize_session=False))
