"""Users' wire views are remembered by ``users.view_version``; every write moves it.

On SQLite and real PostgreSQL, through the migrations' triggers: a credential or tag added,
changed or removed, and the user row itself, each give the user a new version, so the next
rendering shows the change although the previous view was remembered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session, sessionmaker

from infra.db.engine import make_engine, make_session_factory
from infra.db.migrate import upgrade
from infra.db.models.identity import Tag, UserTagAssignment
from infra.db.models.organizations import ApiKey, Organization, User
from infra.views.users import render_users


@pytest.fixture(params=["sqlite", "postgresql"])
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sessionmaker[Session]]:
    url = (f"sqlite:///{tmp_path / 'views.db'}" if request.param == "sqlite"
           else request.getfixturevalue("fresh_pg_url"))
    upgrade(url)
    engine = make_engine(url)
    yield make_session_factory(engine)
    engine.dispose()


def _version(factory: sessionmaker[Session], user_id: str) -> int:
    with factory() as session:
        return int(session.scalar(select(User.view_version).where(User.id == user_id)) or 0)


def _view(factory: sessionmaker[Session], user_id: str) -> dict:
    with factory() as session:
        user = session.get(User, user_id)
        assert user is not None
        return render_users(session, [user])[0]


def _user(factory: sessionmaker[Session], user_id: str) -> str:
    """A root user in an organization of its own; returns the organization's id."""
    with factory() as session:
        org = Organization(name=f"org of {user_id}", root_quorum_threshold=1)
        session.add(org)
        session.flush()
        session.add(User(id=user_id, organization_id=org.id, name="first", is_root=True))
        session.commit()
        return org.id


def _write(factory: sessionmaker[Session], change: Callable[[Session], object]) -> None:
    with factory() as session:
        change(session)
        session.commit()


def test_every_write_to_what_a_user_shows_moves_its_version(
        factory: sessionmaker[Session]) -> None:
    org_id = _user(factory, "u1")
    _write(factory, lambda s: s.add(Tag(id="t1", organization_id=org_id, name="ops",
                                        tag_type="TAG_TYPE_USER")))
    seen = {_version(factory, "u1")}
    assert _view(factory, "u1")["apiKeys"] == []

    def moved() -> None:
        version = _version(factory, "u1")
        assert version not in seen
        seen.add(version)

    _write(factory, lambda s: s.add(ApiKey(
        id="k1", organization_id=org_id, user_id="u1", name="laptop", public_key="02" + "11" * 32,
        curve="API_KEY_CURVE_P256", credential_type="CREDENTIAL_TYPE_API_KEY_P256")))
    moved()
    assert [k["apiKeyName"] for k in _view(factory, "u1")["apiKeys"]] == ["laptop"]

    _write(factory, lambda s: s.execute(update(ApiKey).where(ApiKey.id == "k1")
                                        .values(name="renamed")))
    moved()
    assert [k["apiKeyName"] for k in _view(factory, "u1")["apiKeys"]] == ["renamed"]

    _write(factory, lambda s: s.add(UserTagAssignment(tag_id="t1", user_id="u1")))
    moved()
    assert _view(factory, "u1")["userTags"] == ["t1"]

    _write(factory, lambda s: s.execute(delete(Tag).where(Tag.id == "t1")))   # cascades
    moved()
    assert _view(factory, "u1")["userTags"] == []

    _write(factory, lambda s: s.execute(update(User).where(User.id == "u1").values(name="second")))
    moved()
    assert _view(factory, "u1")["userName"] == "second"

    _write(factory, lambda s: s.execute(delete(ApiKey).where(ApiKey.id == "k1")))
    moved()
    assert _view(factory, "u1")["apiKeys"] == []


def test_a_view_rendered_in_a_rolled_back_transaction_is_never_served(
        factory: sessionmaker[Session]) -> None:
    org_id = _user(factory, "u2")
    with factory() as session:   # renders the uncommitted key, then rolls back
        session.add(ApiKey(organization_id=org_id, user_id="u2", name="ghost",
                           public_key="02" + "22" * 32, curve="API_KEY_CURVE_P256",
                           credential_type="CREDENTIAL_TYPE_API_KEY_P256"))
        session.flush()
        user = session.scalars(select(User).where(User.id == "u2")
                               .execution_options(populate_existing=True)).one()
        assert [k["apiKeyName"] for k in render_users(session, [user])[0]["apiKeys"]] == ["ghost"]
        session.rollback()
    _write(factory, lambda s: s.add(ApiKey(
        organization_id=org_id, user_id="u2", name="real", public_key="02" + "33" * 32,
        curve="API_KEY_CURVE_P256", credential_type="CREDENTIAL_TYPE_API_KEY_P256")))
    assert [k["apiKeyName"] for k in _view(factory, "u2")["apiKeys"]] == ["real"]
