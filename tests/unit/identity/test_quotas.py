"""Resource limits enforced on flush (infra.quotas) over a scratch SQLite database."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

import infra.db.models
import infra.quotas  # noqa: F401 - installs the listener
from infra.clock import now
from infra.credentials import ApiKeyParams, add_api_key
from infra.db.base import Base
from infra.db.engine import make_engine, make_session_factory
from infra.db.models.identity import Authenticator, Tag
from infra.db.models.organizations import ApiKey, Organization, User
from infra.root import create_organization, new_p256_keypair
from infra.validation.limits import ResourceLimitExceeded


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    engine = make_engine(f"sqlite:///{tmp_path / 'q.db'}", pool_size=1)
    Base.metadata.create_all(engine)
    with make_session_factory(engine)() as s:
        yield s
    engine.dispose()


def _org(session: Session, parent_id: str | None = None) -> tuple[Organization, User]:
    org, user = create_organization(session, "org", new_p256_keypair()[1], parent_id=parent_id)
    session.flush()
    return org, user


def _key(session: Session, org: Organization, user: User, expires: str | None = None) -> ApiKey:
    params = ApiKeyParams(api_key_name="k", public_key=new_p256_keypair()[1],
                          curve_type="API_KEY_CURVE_P256", expiration_seconds=expires)
    return add_api_key(session, org.id, user.id, params, now())


def test_users_per_organization(session: Session) -> None:
    org, _ = _org(session)
    session.add_all([User(organization_id=org.id, name=f"u{i}") for i in range(99)])
    session.flush()
    session.add(User(organization_id=org.id, name="one too many"))
    with pytest.raises(ResourceLimitExceeded, match="users_per_organization: 100"):
        session.flush()


def test_deleting_in_the_same_flush_makes_room(session: Session) -> None:
    org, _ = _org(session)
    users = [User(organization_id=org.id, name=f"u{i}") for i in range(99)]
    session.add_all(users)
    session.flush()
    session.delete(users[0])
    session.add(User(organization_id=org.id, name="replacement"))
    session.flush()


def test_grandchild_organizations_are_refused(session: Session) -> None:
    parent, _ = _org(session)
    child, _ = _org(session, parent.id)
    session.add(Organization(name="grandchild", parent_id=child.id))
    with pytest.raises(ResourceLimitExceeded, match="cannot be created in a sub-organization"):
        session.flush()


def test_tags_are_limited_per_kind_of_organization(session: Session) -> None:
    parent, _ = _org(session)
    child, _ = _org(session, parent.id)
    session.add_all([Tag(organization_id=child.id, name=f"t{i}", tag_type="TAG_TYPE_USER")
                     for i in range(10)])
    session.flush()
    session.add(Tag(organization_id=child.id, name="t10", tag_type="TAG_TYPE_USER"))
    with pytest.raises(ResourceLimitExceeded, match=r"sub-organization .* 10"):
        session.flush()
    session.rollback()


def test_authenticators_per_user(session: Session) -> None:
    org, user = _org(session)

    def passkey(i: int) -> Authenticator:
        return Authenticator(organization_id=org.id, user_id=user.id, name=f"p{i}",
                             credential_id=f"c{i}", public_key="k", algorithm=-7, aaguid="a",
                             attestation_type="none")

    session.add_all([passkey(i) for i in range(10)])
    session.flush()
    session.add(passkey(10))
    with pytest.raises(ResourceLimitExceeded, match=r"^user has exceeded .* authenticators"):
        session.flush()


def test_long_lived_api_keys_per_user(session: Session) -> None:
    org, user = _org(session)  # one long-lived key already
    for _ in range(9):
        _key(session, org, user)
    with pytest.raises(ResourceLimitExceeded, match="long_lived_api_keys_per_user"):
        _key(session, org, user)


def test_expiring_api_keys_evict_expired_then_oldest(session: Session) -> None:
    org, user = _org(session)
    keys = [_key(session, org, user, "3600") for _ in range(10)]
    keys[4].expires_at = now() - timedelta(seconds=1)  # lapsed
    session.flush()
    _key(session, org, user, "3600")
    remaining = {k.id for k in session.query(ApiKey).filter(ApiKey.user_id == user.id)}
    assert keys[4].id not in remaining and keys[0].id in remaining
    _key(session, org, user, "3600")
    remaining = {k.id for k in session.query(ApiKey).filter(ApiKey.user_id == user.id)}
    assert keys[0].id not in remaining
    assert len(remaining) == 11  # the long-lived root key and ten expiring ones
