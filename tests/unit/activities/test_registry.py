"""Every activity type and query is registered once, named well, and its models round-trip."""

from __future__ import annotations

import re

import pytest

from infra.activities import Registry, registry
from infra.activities.spec import ActivitySpec, Version
from infra.messaging import queues
from infra.queries import registry as query_registry

SPECS = registry().all()


def test_registry_refuses_duplicate_paths() -> None:
    spec = SPECS[0]
    with pytest.raises(TypeError, match="duplicate activity path"):
        Registry([spec, spec])


def test_registry_refuses_duplicate_types() -> None:
    spec = SPECS[0]
    clone = ActivitySpec(path=spec.path + "_copy", versions=spec.versions, execute=spec.execute,
                         pool=spec.pool, resource=spec.resource, action=spec.action)
    with pytest.raises(TypeError, match="duplicate activity type"):
        Registry([spec, clone])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.path)
def test_activity_spec_is_well_formed(spec: ActivitySpec) -> None:
    # verb_noun, except the few one-word paths of the swagger (``oauth``).
    assert re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", spec.path) or spec.path in {"oauth"}
    # Votes run on the consensus pool, everything else on an executor pool.
    assert spec.pool in (queues.SIGNING, queues.ACCOUNTS, queues.CONSENSUS)
    assert (spec.pool == queues.CONSENSUS) == spec.consensus_vote
    assert spec.versions
    for version in spec.versions:
        assert version.type.startswith("ACTIVITY_TYPE_")
        assert re.fullmatch(r"[a-z][A-Za-z0-9]*Intent(V\d+)?", version.intent_key), version
        assert re.fullmatch(r"[a-z][A-Za-z0-9]*Result(V\d+)?", version.result_key), version


@pytest.mark.parametrize("version", [v for s in SPECS for v in s.versions], ids=lambda v: v.type)
def test_params_model_rejects_an_empty_object_or_roundtrips(version: Version) -> None:
    from pydantic import ValidationError

    try:
        params = version.params.model_validate({})
    except ValidationError:
        return  # has required fields: an empty object is refused
    again = version.params.model_validate(params.wire())
    assert again == params


def test_foundation_types_are_registered() -> None:
    types = set(registry().by_type)
    assert {"ACTIVITY_TYPE_CREATE_API_KEYS_V2", "ACTIVITY_TYPE_DELETE_API_KEYS",
            "ACTIVITY_TYPE_CREATE_USERS_V4", "ACTIVITY_TYPE_UPDATE_USER_NAME"} <= types


def test_foundation_queries_are_registered() -> None:
    assert {"get_activity", "list_activities", "whoami", "get_organization", "list_users",
            "get_user", "get_api_key", "get_api_keys"} <= set(query_registry())


def test_root_quorum_only_specs_and_the_engines_kinds_agree() -> None:
    """The engine's ROOT_QUORUM_KINDS and the ``root_quorum_only`` spec flags name the same
    activities (PROTOCOL.md §8.4: UPDATE_ROOT_QUORUM, SET/REMOVE_ORGANIZATION_FEATURE,
    UPDATE_ORGANIZATION_NAME; the auth proxy's configuration follows the features' rule)."""
    from infra.policy.variables import ROOT_QUORUM_KINDS, activity_kind

    flagged = {activity_kind(v.type) for s in SPECS if s.root_quorum_only for v in s.versions}
    assert flagged == ROOT_QUORUM_KINDS == {
        "UPDATE_ROOT_QUORUM", "SET_ORGANIZATION_FEATURE", "REMOVE_ORGANIZATION_FEATURE",
        "UPDATE_ORGANIZATION_NAME", "ENABLE_AUTH_PROXY", "DISABLE_AUTH_PROXY",
        "UPDATE_AUTH_PROXY_CONFIG"}
    unflagged = {activity_kind(v.type) for s in SPECS if not s.root_quorum_only for v in s.versions}
    assert not unflagged & ROOT_QUORUM_KINDS
