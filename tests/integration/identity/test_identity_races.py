"""Limits and credential uniqueness under concurrency, on real PostgreSQL (and the migration
that adds the unique indexes, on SQLite and PostgreSQL).

Two transactions race on one organization: A flushes and holds its transaction open, B
flushes in a thread. The test waits until B has either finished or is waiting on a lock (a
synchronisation, not a timing assertion), then commits A. Counting then inserting under
READ COMMITTED would let B through; the organization lock of ``infra.identity.quotas`` and the unique
indexes must not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from sqlalchemy import Engine, func, insert, inspect, select, text
from sqlalchemy.orm import Session, sessionmaker

from infra.clock import now
from infra.db.engine import make_engine, make_session_factory
from infra.db.migrate import alembic_config, upgrade
from infra.db.models.identity import OauthProvider
from infra.db.models.organizations import ApiKey
from infra.db.models.policies import Policy
from infra.errors import AlreadyExists
from infra.identity import quotas
from infra.identity.credentials import ApiKeyParams, add_api_key
from infra.identity.directory import add_oauth_provider
from infra.identity.root import create_organization, new_p256_keypair
from infra.sessions.oidc_login import spend_signup
from infra.validation.limits import ResourceLimitExceeded
from tests.support import services

UNIQUE_INDEXES = {
    "api_keys": ("uq_api_keys_public_key_org", ["public_key", "organization_id"]),
    "authenticators": ("uq_authenticators_credential_id_org", ["credential_id", "organization_id"]),
    "oauth_providers": ("uq_oauth_providers_identity",
                        ["organization_id", "issuer", "audience", "subject"]),
}


@pytest.fixture(scope="module")
def pg() -> Iterator[Engine]:
    url = services.create_database()
    upgrade(url)
    engine = make_engine(url, pool_size=4)
    yield engine
    engine.dispose()
    services.drop_database(url)


@pytest.fixture
def factory(pg: Engine) -> sessionmaker[Session]:
    made = make_session_factory(pg)
    quotas.install(made)  # as infra.bootstrap does
    return made


def _organization(factory: sessionmaker[Session]) -> tuple[str, str]:
    with factory() as session:
        org, user = create_organization(session, "race org", new_p256_keypair()[1])
        session.commit()
        return org.id, user.id


def _blocked_or_done(pg: Engine, thread: threading.Thread) -> bool:
    """Wait until ``thread`` finished or another backend waits on a lock."""
    deadline = time.monotonic() + 30
    with pg.connect() as probe:
        while time.monotonic() < deadline:
            if not thread.is_alive():
                return False
            waiting = probe.execute(text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'")).scalar_one()
            probe.rollback()
            if waiting:
                return True
            time.sleep(0.02)
    raise AssertionError("the second transaction neither finished nor waited on a lock")


def _race(pg: Engine, factory: sessionmaker[Session],
          write: Callable[[Session], object]) -> BaseException | None:
    """A writes and flushes; B writes in a thread; A commits; return what B raised."""
    outcome: list[BaseException | None] = []

    def second() -> None:
        with factory() as session:
            try:
                write(session)
                session.commit()
                outcome.append(None)
            except BaseException as ex:  # handed to the test thread
                outcome.append(ex)

    with factory() as first:
        write(first)
        thread = threading.Thread(target=second)
        thread.start()
        _blocked_or_done(pg, thread)
        first.commit()
    thread.join(30)
    assert not thread.is_alive()
    return outcome[0]


def test_concurrent_flushes_cannot_exceed_an_organization_limit(
        pg: Engine, factory: sessionmaker[Session]) -> None:
    org_id, _ = _organization(factory)
    with factory() as session:
        session.execute(insert(Policy), [{"organization_id": org_id, "name": f"p{i}",
                                          "effect": "EFFECT_ALLOW"} for i in range(99)])
        session.commit()

    def add_policy(session: Session) -> None:
        session.add(Policy(organization_id=org_id, name="the 100th", effect="EFFECT_ALLOW"))
        session.flush()

    raised = _race(pg, factory, add_policy)
    assert isinstance(raised, ResourceLimitExceeded), raised
    assert "policies_per_organization: 100" in raised.message
    with factory() as session:
        count = session.scalar(select(func.count()).select_from(Policy)
                               .where(Policy.organization_id == org_id))
    assert count == 100


def test_concurrent_flushes_for_other_organizations_do_not_wait(
        pg: Engine, factory: sessionmaker[Session]) -> None:
    first_org, _ = _organization(factory)
    second_org, _ = _organization(factory)
    with factory() as first, factory() as second:
        first.add(Policy(organization_id=first_org, name="a", effect="EFFECT_ALLOW"))
        first.flush()
        # Holding the first organization's lock does not block the second organization.
        second.add(Policy(organization_id=second_org, name="b", effect="EFFECT_ALLOW"))
        second.flush()
        second.commit()
        first.commit()


def _key_params(public_key: str) -> ApiKeyParams:
    return ApiKeyParams(api_key_name="raced", public_key=public_key,
                        curve_type="API_KEY_CURVE_P256")


def test_the_same_api_key_added_concurrently_is_a_conflict(
        pg: Engine, factory: sessionmaker[Session]) -> None:
    org_id, user_id = _organization(factory)
    public_key = new_p256_keypair()[1]
    raised = _race(pg, factory,
                   lambda s: add_api_key(s, org_id, user_id, _key_params(public_key), now()))
    assert isinstance(raised, AlreadyExists), raised
    assert raised.to_wire()["code"] == 6
    with factory() as session:
        keys = session.scalars(select(ApiKey).where(ApiKey.public_key == public_key)).all()
    assert len(keys) == 1


def test_the_same_oauth_identity_added_concurrently_is_a_conflict(
        pg: Engine, factory: sessionmaker[Session]) -> None:
    org_id, user_id = _organization(factory)
    claims = {"providerName": "idp", "oidcClaims": {"iss": "https://idp.example", "aud": "app",
                                                    "sub": "raced-subject"}}
    raised = _race(pg, factory,
                   lambda s: add_oauth_provider(s, org_id, user_id, claims, now(),
                                                on_oidc_token=spend_signup))
    assert isinstance(raised, AlreadyExists), raised
    with factory() as session:
        count = session.scalar(select(func.count()).select_from(OauthProvider)
                               .where(OauthProvider.subject == "raced-subject"))
    assert count == 1


def test_the_unique_indexes_refuse_duplicates_written_past_the_handlers(
        pg: Engine, factory: sessionmaker[Session]) -> None:
    from sqlalchemy.exc import IntegrityError

    org_id, user_id = _organization(factory)
    row = {"organization_id": org_id, "user_id": user_id, "name": "k",
           "public_key": new_p256_keypair()[1], "curve": "API_KEY_CURVE_P256",
           "credential_type": "CREDENTIAL_TYPE_API_KEY_P256",
           "created_at": now(), "updated_at": now()}
    with factory() as session:
        session.execute(insert(ApiKey), [row])
        with pytest.raises(IntegrityError):
            session.execute(insert(ApiKey), [row])


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migration_adds_the_unique_indexes_and_downgrades(backend: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'm.db'}" if backend == "sqlite" else services.create_database()
    try:
        upgrade(url)
        _assert_indexes(url, unique=True)
        command.downgrade(alembic_config(url), "0003_identity")
        _assert_indexes(url, unique=False)
        upgrade(url)
        _assert_indexes(url, unique=True)
    finally:
        if backend == "postgresql":
            services.drop_database(url)


def _assert_indexes(url: str, *, unique: bool) -> None:
    engine = make_engine(url, pool_size=1)
    try:
        inspector = inspect(engine)
        for table, (name, columns) in UNIQUE_INDEXES.items():
            found: dict[str, Any] = {i["name"]: i for i in inspector.get_indexes(table)}
            if unique:
                assert found[name]["unique"] and found[name]["column_names"] == columns, table
            else:
                assert name not in found, table
    finally:
        engine.dispose()


def test_migration_refuses_existing_duplicates_with_a_clear_message(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'dup.db'}"
    upgrade(url, "0003_identity")
    upgrade(url, "0007_pipeline")   # today's users table (view_version), not the unique index
    engine = make_engine(url, pool_size=1)
    try:
        with make_session_factory(engine)() as session:
            _org, user = create_organization(session, "dup", new_p256_keypair()[1])
            session.flush()
            key = session.scalars(select(ApiKey).where(ApiKey.user_id == user.id)).one()
            copy = {c.name: getattr(key, c.key) for c in ApiKey.__table__.columns}
            copy["id"] = "duplicate-key-id"
            session.execute(insert(ApiKey), [copy])
            session.commit()
    finally:
        engine.dispose()
    with pytest.raises(RuntimeError, match="api_keys holds duplicate credentials"):
        upgrade(url)

