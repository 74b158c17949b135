"""A vote that commits while the executor's claim waits for the row lock is counted.

On PostgreSQL the claim locks the activity and reads its ballot in one statement, whose
snapshot predates the lock; a vote cast meanwhile saw the activity PENDING and handed
nothing on, so the claim's own decision must count it (``infra.pipeline.decide.decide``
reads the ballot again before a non-``allow`` outcome stands). Deterministic: the vote's
transaction holds the lock until the claim is seen waiting for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import text, update
from sqlalchemy.orm import Session, sessionmaker

from infra.activities import registry
from infra.db.engine import make_engine, make_session_factory
from infra.db.migrate import upgrade
from infra.db.models.activities import Activity, Vote
from infra.db.models.organizations import Organization, User
from infra.pipeline import decide, lifecycle

RENAME = "ACTIVITY_TYPE_UPDATE_USER_NAME"


@pytest.fixture
def factory(fresh_pg_url: str) -> Iterator[sessionmaker[Session]]:
    upgrade(fresh_pg_url)
    engine = make_engine(fresh_pg_url)
    yield make_session_factory(engine)
    engine.dispose()


def _vote(user_id: str, activity_id: str) -> Vote:
    return Vote(activity_id=activity_id, user_id=user_id, selection="VOTE_SELECTION_APPROVED",
                message="{}", public_key="02" + user_id, signature="00",
                scheme="SIGNATURE_SCHEME_TK_API_P256")


def _two_root_org(factory: sessionmaker[Session]) -> str:
    with factory() as session:
        org = Organization(name="quorum of two", root_quorum_threshold=2)
        session.add(org)
        session.flush()
        for user_id in ("alice", "bob"):
            session.add(User(id=user_id, organization_id=org.id, name=user_id, is_root=True))
        session.flush()
        activity = Activity(organization_id=org.id, type=RENAME, status=lifecycle.PENDING,
                            fingerprint="sha256:race", body="{}", timestamp_ms="1",
                            intent={"updateUserNameIntent": {"userId": "alice", "userName": "a"}},
                            result={}, user_id="alice")
        session.add(activity)
        session.flush()
        session.add(_vote("alice", activity.id))
        session.commit()
        return activity.id


def _waiting_for_lock(factory: sessionmaker[Session]) -> bool:
    with factory() as session:
        return bool(session.scalar(text(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()")))


def test_a_vote_committed_while_the_claim_waits_is_counted(
        factory: sessionmaker[Session]) -> None:
    activity_id = _two_root_org(factory)
    spec = registry().by_type[RENAME][0]
    outcome: list[str] = []

    def executor() -> None:
        with factory() as session:
            ballot = decide.claim(session, activity_id)
            assert ballot is not None
            outcome.append(decide.decide(session, ballot, spec).outcome)
            session.rollback()

    with factory() as vote:   # bob's approval, as cast_vote does it: lock, vote, commit
        vote.execute(update(Activity).where(Activity.id == activity_id)
                     .values(version=Activity.version + 1))
        vote.add(_vote("bob", activity_id))
        vote.flush()
        thread = threading.Thread(target=executor)
        thread.start()
        deadline = time.monotonic() + 30
        while not _waiting_for_lock(factory):
            assert time.monotonic() < deadline, "the claim never waited for the lock"
            time.sleep(0.01)
        vote.commit()
    thread.join(30)
    # Without the second read: alice alone, root quorum 1/2, "consensus_needed" for ever
    # (bob's vote saw the activity PENDING and handed nothing on).
    assert outcome == ["allow"]
