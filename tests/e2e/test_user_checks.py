"""Bad user input in create_sub_organization and create_users is a 400 before anything is
stored: contacts (E.164 phone numbers, email syntax) and passkey attestations are checked by
the activities' ``check`` in the ingress, so no activity (not even a FAILED one) is recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.deployment import Deployment, make_organization
from tests.support.raw_api import RawApi, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator, b64url


def _bad_phone() -> dict[str, Any]:
    return root_user_params("bad phone", userPhoneNumber="555-0100")


def _bad_email() -> dict[str, Any]:
    return root_user_params("bad email", userEmail="not an address")


def _bad_attestation() -> dict[str, Any]:
    user = root_user_params("bad passkey")
    registration = SoftAuthenticator().registration("laptop")
    registration["challenge"] = b64url(b"another challenge than the signed one")
    user["authenticators"] = [registration]
    return user




@pytest.fixture
def fresh(embedded: Deployment) -> RawApi:
    org = make_organization(embedded, "user checks")
    return RawApi(embedded, org, org.organization_id)


CASES: dict[str, tuple[Callable[[], dict[str, Any]], str]] = {
    "phone": (_bad_phone, "E.164"),
    "email": (_bad_email, "email address"),
    "attestation": (_bad_attestation, "challenge"),
}


def _assert_refused_before_storing(api: RawApi, response: Any, expected: str,
                                   user_field: str) -> None:
    """A 400 naming the problem and the user, and no activity stored at all."""
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["code"] == 3
    assert expected in error["message"], error
    fields = [v["field"] for d in error["details"] for v in d.get("fieldViolations", [])]
    assert any(user_field in f for f in [error["message"], *fields]), error
    assert api.read("list_activities")["activities"] == []


@pytest.mark.parametrize("case", list(CASES))
def test_create_sub_organization_refuses_bad_root_users_up_front(fresh: RawApi,
                                                                 case: str) -> None:
    make, expected = CASES[case]
    response = fresh.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
                            {"subOrganizationName": f"bad {case}", "rootUsers": [make()],
                             "rootQuorumThreshold": 1})
    _assert_refused_before_storing(fresh, response, expected, "parameters.rootUsers[0]")


@pytest.mark.parametrize("case", list(CASES))
def test_create_users_refuses_bad_users_up_front(fresh: RawApi, case: str) -> None:
    make, expected = CASES[case]
    good = root_user_params("good user")
    response = fresh.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3",
                            {"users": [good, make()]})
    _assert_refused_before_storing(fresh, response, expected, "parameters.users[1]")
    names = {u["userName"] for u in fresh.read("list_users")["users"]}
    assert "good user" not in names


def test_good_root_users_with_a_passkey_still_go_through(fresh: RawApi) -> None:
    user = root_user_params("good root", userEmail="root@example.com",
                            userPhoneNumber="+14155550123")
    user["authenticators"] = [SoftAuthenticator().registration("laptop")]
    result = fresh.ok("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
                      {"subOrganizationName": "good", "rootUsers": [user],
                       "rootQuorumThreshold": 1})
    assert result["subOrganizationId"]
