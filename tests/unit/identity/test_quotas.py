"""Resource limits enforced on flush (infra.identity.quotas) over a scratch SQLite database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from infra.clock import now
from infra.db.base import Base
from infra.db.engine import make_engine, make_session_factory
from infra.db.models.identity import (
    Authenticator,
    Invitation,
    OauthProvider,
    SmartContractInterface,
    Tag,
)
from infra.db.models.organizations import ApiKey, Organization, User
from infra.db.models.policies import Policy
from infra.db.models.wallets import PrivateKey, Wallet
from infra.identity import quotas
from infra.identity.credentials import ApiKeyParams, add_api_key
from infra.identity.root import create_organization, new_p256_keypair
from infra.validation.limits import ResourceLimitExceeded


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    engine = make_engine(f"sqlite:///{tmp_path / 'q.db'}", pool_size=1)
    Base.metadata.create_all(engine)
    factory = make_session_factory(engine)
    quotas.install(factory)  # as infra.bootstrap does
    with factory() as s:
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


# --------------------------------------------------------------------------- every §10 limit
# The rows up to the limit are bulk-inserted (no flush, so no listener); the last rows go
# through the ORM and the real ``before_flush`` listener.

Row = Callable[[Organization, User, int], dict[str, Any]]


def _private_key(org: Organization, _user: User, i: int) -> dict[str, Any]:
    return {"organization_id": org.id, "name": f"k{i}", "curve": "CURVE_SECP256K1",
            "public_key": f"02{i:064x}", "wrapped_key": "w", "ciphertext": "c"}


def _wallet(org: Organization, _user: User, i: int) -> dict[str, Any]:
    return {"organization_id": org.id, "name": f"w{i}", "wrapped_key": "w", "ciphertext": "c"}


def _policy(org: Organization, _user: User, i: int) -> dict[str, Any]:
    return {"organization_id": org.id, "name": f"p{i}", "effect": "EFFECT_ALLOW"}


def _invitation(org: Organization, user: User, i: int) -> dict[str, Any]:
    return {"organization_id": org.id, "receiver_user_name": f"r{i}",
            "receiver_email": f"r{i}@example.com", "access_type": "ACCESS_TYPE_WEB",
            "sender_user_id": user.id}


def _tag(org: Organization, _user: User, i: int) -> dict[str, Any]:
    # User tags and private-key tags count together.
    kind = "TAG_TYPE_USER" if i % 2 else "TAG_TYPE_PRIVATE_KEY"
    return {"organization_id": org.id, "name": f"t{i}", "tag_type": kind}


def _interface(org: Organization, _user: User, i: int) -> dict[str, Any]:
    return {"organization_id": org.id, "address": f"0x{i:040x}", "interface": "[]",
            "interface_type": "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM", "label": f"l{i}"}


class OrganizationLimit(NamedTuple):
    model: type[Any]
    row: Row
    noun: str
    name: str
    maximum: int


ORGANIZATION_LIMITS = [
    pytest.param(OrganizationLimit(PrivateKey, _private_key, "private keys",
                                   "private_keys_per_organization", 1000), id="private_keys"),
    pytest.param(OrganizationLimit(Wallet, _wallet, "HD wallets", "wallets_per_organization", 100),
                 id="wallets"),
    pytest.param(OrganizationLimit(Policy, _policy, "policies", "policies_per_organization", 100),
                 id="policies"),
    pytest.param(OrganizationLimit(Invitation, _invitation, "invitations",
                                   "invitations_per_organization", 100), id="invitations"),
    pytest.param(OrganizationLimit(Tag, _tag, "tags", "tags_per_organization", 100), id="tags"),
    pytest.param(OrganizationLimit(SmartContractInterface, _interface, "smart contract interfaces",
                                   "smart_contract_interfaces_per_organization", 100),
                 id="contract_interfaces"),
]


def _count(session: Session, model: type[Any], **where: str) -> int:
    with session.no_autoflush:
        query = select(func.count()).select_from(model).filter_by(**where)
        return int(session.execute(query).scalar_one())


@pytest.mark.parametrize("limit", ORGANIZATION_LIMITS)
def test_organization_limit_admits_the_last_and_refuses_one_more(
        session: Session, limit: OrganizationLimit) -> None:
    model, row, noun, name, maximum = limit
    org, user = _org(session)
    session.execute(insert(model), [row(org, user, i) for i in range(maximum - 1)])
    session.add(model(**row(org, user, maximum - 1)))
    session.flush()  # the maximum itself fits
    session.add(model(**row(org, user, maximum)))
    with pytest.raises(ResourceLimitExceeded) as err:
        session.flush()
    assert err.value.to_wire()["code"] == 8
    assert err.value.message == (
        f"organization has exceeded maximum number of {noun} (limit {name}: {maximum})")
    assert _count(session, model, organization_id=org.id) == maximum  # nothing more stored


@pytest.mark.parametrize("limit", ORGANIZATION_LIMITS)
def test_organization_limit_counts_a_batch_as_a_whole(
        session: Session, limit: OrganizationLimit) -> None:
    model, row, _noun, name, maximum = limit
    org, user = _org(session)
    session.execute(insert(model), [row(org, user, i) for i in range(maximum - 2)])
    session.add_all([model(**row(org, user, maximum - 2 + i)) for i in range(3)])
    with pytest.raises(ResourceLimitExceeded, match=f"{name}: {maximum}"):
        session.flush()
    assert _count(session, model, organization_id=org.id) == maximum - 2


def test_organization_limits_are_per_organization(session: Session) -> None:
    full, user = _org(session)
    other, _ = _org(session)
    session.execute(insert(Policy), [_policy(full, user, i) for i in range(100)])
    session.add(Policy(**_policy(other, user, 0)))
    session.flush()
    assert _count(session, Policy, organization_id=other.id) == 1


def _oauth(org: Organization, user: User, i: int) -> dict[str, Any]:
    return {"organization_id": org.id, "user_id": user.id, "name": f"o{i}",
            "issuer": "https://issuer.example", "audience": "app", "subject": f"s{i}"}


def test_oauth_providers_per_user(session: Session) -> None:
    org, user = _org(session)
    session.execute(insert(OauthProvider), [_oauth(org, user, i) for i in range(9)])
    session.add(OauthProvider(**_oauth(org, user, 9)))
    session.flush()
    session.add(OauthProvider(**_oauth(org, user, 10)))
    with pytest.raises(ResourceLimitExceeded) as err:
        session.flush()
    assert err.value.message == (
        "user has exceeded maximum number of OAuth providers (limit oauth_providers_per_user: 10)")
    assert _count(session, OauthProvider, user_id=user.id) == 10
    session.expunge_all()
    other = User(organization_id=org.id, name="other user")
    session.add(other)
    session.flush()
    session.add(OauthProvider(**_oauth(org, other, 10)))  # the limit is per user
    session.flush()
    assert _count(session, OauthProvider, user_id=other.id) == 1


def test_flushes_lock_the_organizations_they_count_in_not_a_new_sub_orgs_parent() -> None:
    """What ``lock_organizations`` locks on PostgreSQL (the race itself is an integration test)."""
    from infra.identity.quotas import _limited_organizations

    new_sub = Organization(id="new-sub", name="sub", parent_id="parent")
    pending = [Policy(organization_id="a", name="p", effect="EFFECT_ALLOW"),
               User(organization_id="b", name="u"), new_sub,
               User(organization_id="new-sub", name="root")]
    assert _limited_organizations(pending) == {"a", "b"}
