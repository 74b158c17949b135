"""Access caches follow the database's announcements, on PostgreSQL and on SQLite.

IP allow-lists, MFA policies and session profiles are remembered per process
(``infra.access.changes``, ``infra.access.session_profiles.PROFILES``). A change made outside
the process that remembers them, by another connection with plain SQL (an operator's fix, a
second process, a restore), must be seen by the next request: the tables announce their
writes (``NOTIFY walletd_rows_changed`` on PostgreSQL, the ``rows_changed`` counts on
SQLite; migration ``0032_access_announced``), as the API keys' and signers' tables do.

The attacker's side: they hold an API key of the organization and send from an address the
organization's list allowed; the operator narrows the list with a plain ``UPDATE``. What must
stop them is the process forgetting the list it remembered, at their next request; the
operator's own address keeps working.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from infra.access import ip_allowlist, session_profiles
from infra.clock import new_id
from infra.errors import PermissionDenied
from infra.pipeline import mfa
from tests.support.eventually import until_passes
from tests.support.in_process import Client, Deployment, running

OPERATOR = "127.0.0.9"
ATTACKER = "10.1.2.3"


@pytest.fixture(params=["postgresql", "sqlite"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Deployment]:
    url = request.getfixturevalue("fresh_pg_url") if request.param == "postgresql" else None
    with running(url, tmp_path) as deployment:
        yield deployment


def _plain_sql(world: Deployment, sql: str, **params: Any) -> None:
    """Commit ``sql`` on a connection of its own, outside every walletd code path."""
    engine = create_engine(world.url)
    try:
        with engine.begin() as conn:
            conn.execute(text(sql), params)
    finally:
        engine.dispose()


def _json(world: Deployment, name: str) -> str:
    """A JSON parameter as the dialect takes it in plain SQL."""
    return f"CAST(:{name} AS JSON)" if world.url.startswith("postgresql") else f":{name}"


def _next_request_sees(check: Callable[[], None]) -> None:
    """Run ``check`` until it passes (bounded): PostgreSQL delivers announcements on the
    listener's thread, a moment after the commit."""
    until_passes(check, retry_on=(AssertionError, PermissionDenied))


def _whoami(client: Client, address: str) -> dict[str, Any]:
    return client.query("whoami", {}, address)


def test_an_allow_list_narrowed_by_plain_sql_stops_the_next_request(world: Deployment) -> None:
    client = Client(world.services, world.root)
    org = world.root["organizationId"]
    listed = client.submit("set_ip_allowlist", "ACTIVITY_TYPE_SET_IP_ALLOWLIST", {
        "enabled": True, "rules": [{"cidr": "127.0.0.0/24"}, {"cidr": "10.0.0.0/8"}]},
        address=OPERATOR)
    assert listed["status"] == "ACTIVITY_STATUS_COMPLETED", listed
    _next_request_sees(lambda: _whoami(client, ATTACKER))

    def remembered() -> None:
        """Read, then answered from the process's cache (once the announcement of the
        activity's own write, which may arrive after a read, has come and gone)."""
        _whoami(client, ATTACKER)
        assert ip_allowlist.CACHE._cache.get(org) is not None

    _next_request_sees(remembered)

    _plain_sql(world, f"UPDATE ip_allowlists SET rules = {_json(world, 'rules')} "
                      "WHERE organization_id = :org",
               rules=json.dumps([{"cidr": "127.0.0.0/24"}]), org=org)

    def attacker_refused() -> None:
        with pytest.raises(PermissionDenied, match="refused by the IP allowlist of organization"):
            _whoami(client, ATTACKER)

    _next_request_sees(attacker_refused)
    assert _whoami(client, OPERATOR)["userId"] == world.root["userId"]

    # Removed by plain SQL too: the attacker's address is served again, nothing remembered.
    _plain_sql(world, "DELETE FROM ip_allowlists WHERE organization_id = :org", org=org)
    _next_request_sees(lambda: _whoami(client, ATTACKER))


def test_an_mfa_policy_written_by_another_connection_is_read_by_the_next_execution(
        world: Deployment) -> None:
    org, user = world.root["organizationId"], world.root["userId"]
    def none_remembered() -> None:
        with world.services.session_factory() as session:
            assert mfa.policies_of(session, org, user) == ()
        assert mfa.CACHE._cache.get(org) is not None

    _next_request_sees(none_remembered)
    policy_id = new_id()
    _plain_sql(world, "INSERT INTO mfa_policies (id, organization_id, user_id, name, condition, "
                      f"required_methods, \"order\", notes, created_at, updated_at) VALUES (:id, "
                      f":org, :user, 'second factor', 'true', {_json(world, 'steps')}, 0, '', "
                      "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)",
               id=policy_id, org=org, user=user,
               steps=json.dumps([{"any": [{"type": "AUTHENTICATION_METHOD_TYPE_PASSKEY"}]}]))

    def guarded() -> None:
        with world.services.session_factory() as session:
            assert [p.id for p in mfa.policies_of(session, org, user)] == [policy_id]

    _next_request_sees(guarded)


def test_a_session_profile_changed_by_plain_sql_is_enforced_as_changed(world: Deployment) -> None:
    profile_id = new_id()
    _plain_sql(world, "INSERT INTO session_profiles (id, organization_id, name, scope, notes, "
                      "created_at, updated_at) VALUES (:id, :org, 'reader', 'true', '', "
                      "CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)",
               id=profile_id, org=world.root["organizationId"])

    def scope_is(expected: str) -> Callable[[], None]:
        def check() -> None:
            with world.services.session_factory() as session:
                found = session_profiles.profile_of(session, profile_id)
            assert found is not None and found.scope == expected
        return check

    def remembered() -> None:
        scope_is("true")()
        assert session_profiles.PROFILES.get(profile_id) is not None

    _next_request_sees(remembered)

    _plain_sql(world, "UPDATE session_profiles SET scope = 'false' WHERE id = :id", id=profile_id)
    _next_request_sees(scope_is("false"))

    _plain_sql(world, "DELETE FROM session_profiles WHERE id = :id", id=profile_id)

    def gone() -> None:
        with world.services.session_factory() as session:
            assert session_profiles.profile_of(session, profile_id) is None

    _next_request_sees(gone)
