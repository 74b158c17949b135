"""Every guess at a one-time code counts, even when the activity that made it rolls back.

On PostgreSQL ``infra.sessions.otp.consume`` spends the attempt in a transaction of its own
that reads the code under a row lock and commits whether the guess was right or wrong. The
activity pipeline rolls a failed activity's transaction back, so here each guess runs in a
transaction that is rolled back afterwards, as a wrong guess's activity is: the attempts must
stay spent. Concurrent wrong guesses (threads released together) spend one attempt each and
the code is dead after three, even for the right code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy.orm import Session, sessionmaker

from infra.crypto.keyring import MasterKeyring
from infra.db.engine import make_engine, make_session_factory
from infra.db.migrate import upgrade
from infra.db.models.organizations import Organization
from infra.db.models.sessions import OtpCode
from infra.errors import InvalidRequest
from infra.sessions import otp
from infra.sessions.service_keys import ServiceKeys
from infra.wallets.custody import Custody


@pytest.fixture
def factory(fresh_pg_url: str) -> Iterator[sessionmaker[Session]]:
    upgrade(fresh_pg_url)
    engine = make_engine(fresh_pg_url)
    yield make_session_factory(engine)
    engine.dispose()


def _keyring_of(keyring: MasterKeyring) -> Callable[[], MasterKeyring]:
    return lambda: keyring


@pytest.fixture
def keys(factory: sessionmaker[Session]) -> ServiceKeys:
    service_keys = ServiceKeys(Custody(_keyring_of(MasterKeyring.generate())))
    with factory() as session:
        service_keys.ensure_all(session)
    return service_keys


def _issue(factory: sessionmaker[Session], keys: ServiceKeys) -> tuple[str, str, str]:
    """A fresh code: (organization id, otp id, the code)."""
    with factory() as session:
        org = Organization(name="otp org")
        session.add(org)
        session.flush()
        row, code = otp.issue(session, keys, organization_id=org.id, purpose="otp",
                              otp_type="OTP_TYPE_EMAIL", contact="guess@example.com",
                              user_id=None, length=6, alphanumeric=False,
                              expiration_seconds=300, now=datetime.now(UTC))
        session.commit()
        return org.id, row.id, code


def _guess(factory: sessionmaker[Session], keys: ServiceKeys, org_id: str, otp_id: str,
           code: str) -> bool:
    """One guess in a transaction that is rolled back afterwards; whether it was accepted."""
    with factory() as session:
        try:
            otp.consume(session, keys, organization_ids=[org_id], otp_id=otp_id,
                        purpose="otp", code=code, now=datetime.now(UTC))
            return True
        except InvalidRequest:
            return False
        finally:
            session.rollback()


def _attempts(factory: sessionmaker[Session], otp_id: str) -> int:
    with factory() as session:
        row = session.get(OtpCode, otp_id)
        assert row is not None
        return row.attempts


def _wrong(code: str) -> str:
    return "".join("1" if c != "1" else "2" for c in code)


def test_wrong_guesses_stay_spent_when_their_transaction_rolls_back(
        factory: sessionmaker[Session], keys: ServiceKeys) -> None:
    org_id, otp_id, code = _issue(factory, keys)
    for _ in range(otp.MAX_ATTEMPTS):
        assert not _guess(factory, keys, org_id, otp_id, _wrong(code))
    assert _attempts(factory, otp_id) == otp.MAX_ATTEMPTS
    # The code is dead: the right code no longer opens it.
    assert not _guess(factory, keys, org_id, otp_id, code)


def test_concurrent_wrong_guesses_each_spend_an_attempt(factory: sessionmaker[Session],
                                                        keys: ServiceKeys) -> None:
    org_id, otp_id, code = _issue(factory, keys)
    guesses = 8
    start = threading.Barrier(guesses)
    outcomes: list[bool] = []

    def guess() -> None:
        start.wait()
        outcomes.append(_guess(factory, keys, org_id, otp_id, _wrong(code)))

    threads = [threading.Thread(target=guess) for _ in range(guesses)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert outcomes == [False] * guesses
    assert _attempts(factory, otp_id) == otp.MAX_ATTEMPTS
    assert not _guess(factory, keys, org_id, otp_id, code)


def test_the_right_code_is_accepted_once(factory: sessionmaker[Session],
                                         keys: ServiceKeys) -> None:
    org_id, otp_id, code = _issue(factory, keys)
    assert not _guess(factory, keys, org_id, otp_id, _wrong(code))
    with factory() as session:
        row = otp.consume(session, keys, organization_ids=[org_id], otp_id=otp_id,
                          purpose="otp", code=code, now=datetime.now(UTC))
        assert row.used_at is not None
        session.commit()
    assert _attempts(factory, otp_id) == 2
    assert not _guess(factory, keys, org_id, otp_id, code)
