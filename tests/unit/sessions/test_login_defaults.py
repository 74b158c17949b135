"""Users may log themselves in without a policy; not others, and not by email."""

from __future__ import annotations

import pytest

from infra.activities import registry
from infra.pipeline.engine import Proposal, evaluate
from infra.policy.variables import user_variable

BOB = user_variable("bob")


@pytest.mark.parametrize(("activity_type", "parameters", "allowed"), [
    ("ACTIVITY_TYPE_STAMP_LOGIN", {"publicKey": "02ab"}, True),
    ("ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION", {}, True),
    ("ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2", {"targetPublicKey": "04"}, True),
    ("ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2", {"userId": "bob"}, True),
    ("ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2", {"userId": "alice"}, False),
    ("ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION", {"email": "bob@example.com"}, False),
    ("ACTIVITY_TYPE_OTP_AUTH", {"otpId": "x"}, False),
])
def test_own_sessions_are_allowed_by_default(activity_type: str, parameters: dict[str, str],
                                             allowed: bool) -> None:
    decision = evaluate([], Proposal(activity_type, parameters, "bob", [BOB],
                                     resource_action=registry().resource_action(activity_type)))
    assert decision.allowed is allowed
    if allowed:
        assert decision.reason == "default: users may log themselves in"
