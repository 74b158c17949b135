"""``update_organization_name`` and ``delete_policies`` on real rows (SQLite file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.activities import registry
from infra.activities.spec import ActivityContext, CheckContext
from infra.clock import now
from infra.db.models.activities import Activity
from infra.db.models.organizations import Organization, User
from infra.db.models.policies import Policy
from infra.db.unit_of_work import UnitOfWork
from infra.errors import NotFound
from tests.support.sqlite import sqlite_unit_of_work


@pytest.fixture
def uow(tmp_path: Path) -> Iterator[UnitOfWork]:
    with sqlite_unit_of_work(tmp_path / "org.db") as unit:
        s = unit.session
        for org_id in ("org", "other"):
            s.add(Organization(id=org_id, name=org_id, root_quorum_threshold=1))
        s.flush()
        s.add(User(id="root", organization_id="org", name="root", is_root=True))
        s.commit()
        yield unit


@pytest.fixture
def session(uow: UnitOfWork) -> Session:
    return uow.session


def _run(uow: UnitOfWork, type_name: str, parameters: dict[str, Any]) -> dict[str, Any]:
    session = uow.session
    spec, version = registry().by_type[type_name]
    params = version.params.model_validate(parameters)
    activity = Activity(organization_id="org", type=type_name, status="ACTIVITY_STATUS_PENDING",
                        fingerprint="sha256:x", body="{}", timestamp_ms="0",
                        intent={version.intent_key: parameters}, user_id="root")
    session.add(activity)
    session.flush()
    if spec.check is not None:
        spec.check(params, CheckContext(session, "org", "root", now()))
    ctx = ActivityContext(uow=uow, activity=activity, organization_id="org",
                          user_id="root", version=version, now=now(),
                          services=None)  # type: ignore[arg-type]
    return spec.execute(params, ctx)


def _policy(session: Session, org: str, name: str) -> str:
    policy = Policy(organization_id=org, name=name, effect="EFFECT_ALLOW", condition="true",
                    consensus="", notes="")
    session.add(policy)
    session.flush()
    return policy.id


def test_update_organization_name_renames_and_answers_the_swagger_result(
        uow: UnitOfWork, session: Session) -> None:
    result = _run(uow, "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME", {"organizationName": "Acme"})
    assert result == {"organizationId": "org", "organizationName": "Acme"}
    org = session.get(Organization, "org")
    assert org is not None and org.name == "Acme"
    other = session.get(Organization, "other")
    assert other is not None and other.name == "other"


def test_update_organization_name_refuses_an_empty_name() -> None:
    _, version = registry().by_type["ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME"]
    with pytest.raises(ValidationError):
        version.params.model_validate({"organizationName": ""})


def test_update_organization_name_is_root_quorum_only_with_swagger_keys() -> None:
    spec, version = registry().by_type["ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME"]
    assert spec.root_quorum_only and spec.path == "update_organization_name"
    assert (version.intent_key, version.result_key) == (
        "updateOrganizationNameIntent", "updateOrganizationNameResult")


def test_delete_policies_deletes_each_named_policy(uow: UnitOfWork, session: Session) -> None:
    keep = _policy(session, "org", "keep")
    gone = [_policy(session, "org", "a"), _policy(session, "org", "b")]
    result = _run(uow, "ACTIVITY_TYPE_DELETE_POLICIES", {"policyIds": [*gone, gone[0]]})
    assert result == {"policyIds": gone}
    left = session.scalars(select(Policy.id).where(Policy.organization_id == "org")).all()
    assert left == [keep]


def test_delete_policies_with_an_unknown_or_foreign_id_deletes_nothing(
        uow: UnitOfWork, session: Session) -> None:
    mine = _policy(session, "org", "mine")
    theirs = _policy(session, "other", "theirs")
    with pytest.raises(NotFound, match=theirs):
        _run(uow, "ACTIVITY_TYPE_DELETE_POLICIES", {"policyIds": [mine, theirs]})
    assert session.get(Policy, mine) is not None and session.get(Policy, theirs) is not None


def test_delete_policies_needs_at_least_one_id() -> None:
    spec, version = registry().by_type["ACTIVITY_TYPE_DELETE_POLICIES"]
    assert (spec.resource, spec.action) == ("POLICY", "DELETE")
    assert (version.intent_key, version.result_key) == ("deletePoliciesIntent", "deletePoliciesResult")
    with pytest.raises(ValidationError):
        version.params.model_validate({"policyIds": []})
