"""The activity variable and the helpers that shape the other variables."""

from __future__ import annotations

from datetime import datetime

import pytest

from infra.activities import registry
from infra.policy.variables import (
    ResourceAction,
    activity_kind,
    activity_params,
    activity_variable,
    eip712_variable,
    eth_tx_variable,
    time_variable,
    variables,
)


@pytest.mark.parametrize(
    ("activity_type", "kind"),
    [
        ("ACTIVITY_TYPE_SIGN_TRANSACTION_V2", "SIGN_TRANSACTION"),
        ("ACTIVITY_TYPE_SIGN_TRANSACTION", "SIGN_TRANSACTION"),
        ("ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8", "CREATE_SUB_ORGANIZATION"),
        ("ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", "OAUTH2_AUTHENTICATE"),
        ("ACTIVITY_TYPE_INIT_OTP_AUTH_V3", "INIT_OTP_AUTH"),
    ],
)
def test_activity_kind_drops_prefix_and_version(activity_type: str, kind: str) -> None:
    assert activity_kind(activity_type) == kind


@pytest.mark.parametrize(
    ("kind", "pair"),
    [
        ("CREATE_POLICY", ("POLICY", "CREATE")),
        ("CREATE_POLICIES", ("POLICY", "CREATE")),
        ("EXPORT_WALLET_ACCOUNT", ("WALLET", "EXPORT")),
        ("SIGN_TRANSACTION", ("PRIVATE_KEY", "SIGN")),
        ("ETH_SEND_TRANSACTION", ("PRIVATE_KEY", "SIGN")),
        ("CREATE_API_ONLY_USERS", ("USER", "CREATE")),
        ("CREATE_OAUTH_PROVIDERS", ("CREDENTIAL", "CREATE")),
        ("OTP_LOGIN", ("AUTH", "CREATE")),
        ("VERIFY_OTP", ("OTP", "VERIFY")),
        ("DISABLE_PRIVATE_KEY", ("PRIVATE_KEY", "DELETE")),
    ],
)
def test_resource_action_table_matches_the_docs(kind: str, pair: tuple[str, str]) -> None:
    """The specs state what the docs' table lists (every version of the kind)."""
    served = [t for t in registry().by_type if activity_kind(t) == kind]
    assert served or kind in {"CREATE_API_ONLY_USERS", "DISABLE_PRIVATE_KEY"}
    for activity_type in served:
        assert registry().resource_action(activity_type) == ResourceAction(*pair)


def test_params_expose_only_the_allow_list_in_snake_case() -> None:
    params = {
        "signWith": "0xabc",
        "payload": "00",
        "hashFunction": "HASH_FUNCTION_NO_OP",
        "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
    }
    assert activity_params("ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", params) == {
        "hash_function": "HASH_FUNCTION_NO_OP", "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
    }  # fmt: skip
    assert activity_params("ACTIVITY_TYPE_CREATE_WALLET", {"walletName": "w"}) == {}
    assert activity_params("ACTIVITY_TYPE_OTP_LOGIN_V2", {}) == {"session_profile_id": ""}
    assert activity_params("ACTIVITY_TYPE_INIT_OTP_AUTH_V3", {"otpLength": "6"}) == {
        "otp_length": 6
    }


def test_root_quorum_types_have_no_kind_resource_or_action() -> None:
    governed = ResourceAction("ORGANIZATION", "UPDATE")
    assert activity_variable("ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", {}, governed) == {
        "type": "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", "params": {},
    }  # fmt: skip


def test_unknown_types_have_a_kind_but_no_resource() -> None:
    variable = activity_variable("ACTIVITY_TYPE_APPROVE_ACTIVITY", {"fingerprint": "x"},
                                 registry().resource_action("ACTIVITY_TYPE_APPROVE_ACTIVITY"))
    assert variable["kind"] == "APPROVE_ACTIVITY" and "resource" not in variable


def test_eip712_variable_types_values_and_lowercases_hex() -> None:
    typed = {
        "types": {"Mail": [{"name": "to", "type": "address"}, {"name": "n", "type": "uint256"},
                           {"name": "ids", "type": "int8[]"}]},
        "primaryType": "Mail",
        "domain": {"name": "D", "version": "1", "chainId": "0x1",
                   "verifyingContract": "0xABCDEF"},
        "message": {"to": "0xAbC", "n": "12", "ids": ["-1", 2], "extra": "0xFF"},
    }  # fmt: skip
    assert eip712_variable(typed) == {
        "primary_type": "Mail",
        "domain": {"name": "D", "version": "1", "chain_id": 1, "verifying_contract": "0xabcdef"},
        "message": {"to": "0xabc", "n": 12, "ids": [-1, 2], "extra": "0xff"},
    }


def test_eth_tx_variable_keeps_documented_fields_and_fills_gas_price() -> None:
    tx = eth_tx_variable({"to": "0xAB", "max_fee_per_gas": 7, "secret": 1, "value": 0})
    assert tx == {"to": "0xab", "max_fee_per_gas": 7, "gas_price": 7, "value": 0}


def test_variables_leave_absent_inputs_absent() -> None:
    env = variables(activity={"type": "T"}, now=datetime(2026, 1, 1))
    assert set(env) == {"activity", "approvers", "credentials", "time"}
    assert env["time"] == time_variable(datetime(2026, 1, 1))
    assert env["time"]["now"].tzinfo is not None
