"""Build the variables policies are evaluated against (PROTOCOL.md §8.3).

``activity`` is derived here from the wire type and parameters: ``kind`` is the
version-agnostic name, ``resource``/``action`` are what the type's spec states
(:class:`ResourceAction`, values from the documented enums), and ``params``
exposes only the allow-listed request fields, renamed to snake_case. The other variables
(``approvers``, ``credentials``, ``wallet``, ``wallets``, ``wallet_account``, ``private_key``,
``secrets``,
``eth.tx``, ``eth.eip_712``, ``time.now``) are plain dicts that callers build from their own
rows; the small constructors below fix their shapes so every caller builds them alike.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

TYPE_PREFIX = "ACTIVITY_TYPE_"
_VERSION_SUFFIX = re.compile(r"_V\d+$")

# Root-quorum activities are not policy-governed and have no kind (PROTOCOL.md §8.4).
ROOT_QUORUM_KINDS = frozenset(
    {"UPDATE_ROOT_QUORUM", "SET_ORGANIZATION_FEATURE", "REMOVE_ORGANIZATION_FEATURE",
     "UPDATE_ORGANIZATION_NAME", "ENABLE_AUTH_PROXY", "DISABLE_AUTH_PROXY",
     "UPDATE_AUTH_PROXY_CONFIG", "SET_IP_ALLOWLIST", "REMOVE_IP_ALLOWLIST",
     "CREATE_SESSION_PROFILE", "CREATE_MFA_POLICY", "UPDATE_MFA_POLICY", "DELETE_MFA_POLICY"}
)  # fmt: skip

#: ``activity.resource`` values the docs list (Turnkey docs, features/policies/language.mdx
#: "Activity resources and actions").
RESOURCES: Final = frozenset({
    "AUTH", "AUTH_PROXY", "CONFIG", "CREDENTIAL", "FIAT_TRANSACTION", "INVITATION", "MFA_POLICY",
    "ON_RAMP_CREDENTIALS", "ORGANIZATION", "OTP", "PAYMENT_METHOD", "POLICY", "PRIVATE_KEY",
    "RECOVERY", "SESSION_PROFILE", "SMART_CONTRACT_INTERFACE", "SPONSORSHIP", "SUBSCRIPTION",
    "TVC_APP", "TVC_DEPLOYMENT", "TVC_OPERATOR", "TVC_QUORUM_KEY", "USER", "WALLET",
    "WEBHOOK_ENDPOINT",
    # Turnkey's secrets (features/secrets.mdx) are newer than that list; their activities are
    # SECRET / IMPORT|EXPORT here (docs/SECRETS.md).
    "SECRET",
})  # fmt: skip
#: ``activity.action`` values the docs list.
ACTIONS: Final = frozenset(
    {"CREATE", "UPDATE", "DELETE", "SIGN", "EXPORT", "IMPORT", "VERIFY", "ENCRYPT"}
)


@dataclass(frozen=True)
class ResourceAction:
    """What ``activity.resource`` / ``activity.action`` say of an activity type.

    The activity's spec is the one place that states it (``ActivitySpec.resource`` /
    ``action``); a value outside the documented enums is refused when the spec is declared.
    """

    resource: str
    action: str

    def __post_init__(self) -> None:
        if self.resource not in RESOURCES:
            raise ValueError(f"activity.resource {self.resource!r} is not one the docs list: "
                             f"use one of {sorted(RESOURCES)}")
        if self.action not in ACTIONS:
            raise ValueError(f"activity.action {self.action!r} is not one the docs list: "
                             f"use one of {sorted(ACTIONS)}")


_HASH_AND_ENCODING = (("hashFunction", "hash_function", None), ("encoding", "encoding", None))
_TARGET_KEY = (("targetPublicKey", "target_public_key", None),)
_SESSION_PROFILE = (("sessionProfileId", "session_profile_id", ""),)

# Exact type -> ((wire name, policy name, default when absent), ...); nothing else is exposed.
PARAMS: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD": _HASH_AND_ENCODING,
    "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2": _HASH_AND_ENCODING,
    "ACTIVITY_TYPE_SIGN_RAW_PAYLOADS": _HASH_AND_ENCODING,
    "ACTIVITY_TYPE_SIGN_TRANSACTION_V2": (("type", "type", None),),
    "ACTIVITY_TYPE_DELETE_USERS": (("userIds", "user_ids", None),),
    "ACTIVITY_TYPE_CREATE_API_KEYS": (("userId", "user_id", None),),
    "ACTIVITY_TYPE_CREATE_API_KEYS_V2": (("userId", "user_id", None),),
    "ACTIVITY_TYPE_DELETE_API_KEYS": (
        ("userId", "user_id", None),
        ("apiKeyIds", "api_key_ids", None),
    ),
    "ACTIVITY_TYPE_EXPORT_WALLET": _TARGET_KEY,
    "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT": _TARGET_KEY,
    "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY": _TARGET_KEY,
    "ACTIVITY_TYPE_UPDATE_WALLET": (("walletId", "wallet_id", None),),
    "ACTIVITY_TYPE_INIT_OTP_AUTH_V2": (("otpLength", "otp_length", None),),
    "ACTIVITY_TYPE_INIT_OTP_AUTH_V3": (("otpLength", "otp_length", None),),
    "ACTIVITY_TYPE_OTP_LOGIN": _SESSION_PROFILE,
    "ACTIVITY_TYPE_OTP_LOGIN_V2": _SESSION_PROFILE,
    "ACTIVITY_TYPE_STAMP_LOGIN": _SESSION_PROFILE,
    "ACTIVITY_TYPE_OAUTH_LOGIN": _SESSION_PROFILE,
    "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT": (("endpointId", "endpoint_id", None),),
    "ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT": (("endpointId", "endpoint_id", None),),
}


def activity_kind(activity_type: str) -> str:
    """``ACTIVITY_TYPE_SIGN_TRANSACTION_V2`` → ``SIGN_TRANSACTION``."""
    name = activity_type.removeprefix(TYPE_PREFIX)
    return _VERSION_SUFFIX.sub("", name)


def activity_params(activity_type: str, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The allow-listed, snake_case view of an activity's parameters."""
    exposed: dict[str, Any] = {}
    for wire, name, default in PARAMS.get(activity_type, ()):
        value = parameters.get(wire)
        if value is None:
            value = default
        if value is not None:
            if name == "otp_length" and isinstance(value, str) and value.isdigit():
                value = int(value)
            exposed[name] = list(value) if isinstance(value, list) else value
    return exposed


def activity_variable(activity_type: str, parameters: Mapping[str, Any],
                      resource_action: ResourceAction | None) -> dict[str, Any]:
    """``activity{type, kind, resource, action, params}`` for one activity.

    ``resource_action`` is what the type's spec states (``ActivitySpec.resource_action``).
    Root-quorum types get no kind/resource/action (they are not policy-governed), and types
    without one (votes) get no resource/action, so a policy reading those fields evaluates
    to ``OUTCOME_ERROR`` rather than matching by accident.
    """
    kind = activity_kind(activity_type)
    variable: dict[str, Any] = {
        "type": activity_type,
        "params": activity_params(activity_type, parameters),
    }
    if kind in ROOT_QUORUM_KINDS:
        return variable
    variable["kind"] = kind
    if resource_action is not None:
        variable["resource"] = resource_action.resource
        variable["action"] = resource_action.action
    return variable


def user_variable(
    user_id: str, *, tags: Iterable[str] = (), email: str = "", alias: str = ""
) -> dict[str, Any]:
    """One element of ``approvers``: ``User{id, tags, email, alias}``."""
    return {"id": user_id, "tags": list(tags), "email": email or "", "alias": alias or ""}


def credential_variable(
    credential_id: str,
    *,
    user_id: str,
    credential_type: str,
    public_key: str,
    authenticator_credential_id: str = "",
) -> dict[str, Any]:
    """One element of ``credentials``.

    ``Credential{id, user_id, type, credential_id, public_key}``; ``credential_id`` is only set
    for passkeys.
    """
    return {
        "id": credential_id,
        "user_id": user_id,
        "type": credential_type,
        "credential_id": authenticator_credential_id or "",
        "public_key": public_key,
    }


def wallet_variable(
    wallet_id: str, *, label: str = "", imported: bool = False, exported: bool = False
) -> dict[str, Any]:
    """``wallet{id, imported, exported, label}`` (also an element of ``wallets``)."""
    return {"id": wallet_id, "imported": imported, "exported": exported, "label": label}


def private_key_variable(
    private_key_id: str,
    *,
    tags: Iterable[str] = (),
    label: str = "",
    imported: bool = False,
    exported: bool = False,
) -> dict[str, Any]:
    """``private_key{id, tags, imported, exported, label}``."""
    return {
        "id": private_key_id,
        "tags": list(tags),
        "imported": imported,
        "exported": exported,
        "label": label,
    }


def wallet_account_variable(address: str) -> dict[str, Any]:
    """``wallet_account{address}``."""
    return {"address": address}


def time_variable(now: datetime) -> dict[str, Any]:
    """``time{now}``; naive datetimes are taken as UTC."""
    return {"now": now if now.tzinfo else now.replace(tzinfo=UTC)}


def _lower_hex(value: Any) -> Any:
    """Lower-case every hex string in an EIP-712 value (PROTOCOL.md §8.3)."""
    if isinstance(value, str) and value[:2] in ("0x", "0X"):
        return value.lower()
    if isinstance(value, Mapping):
        return {k: _lower_hex(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_lower_hex(v) for v in value]
    return value


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return None
    return None


def _typed_value(value: Any, type_name: str, types: Mapping[str, Any], depth: int = 0) -> Any:
    """One EIP-712 value as the policy sees it: ints for (u)int types, lower-case hex."""
    if depth > 32:
        return value
    if type_name.endswith("]") and isinstance(value, list):
        inner = type_name[: type_name.rindex("[")]
        return [_typed_value(v, inner, types, depth + 1) for v in value]
    if type_name in types and isinstance(value, Mapping):
        fields = {f.get("name"): f.get("type", "") for f in types[type_name] if isinstance(f, dict)}
        return {
            k: _typed_value(v, str(fields.get(k, "")), types, depth + 1) for k, v in value.items()
        }
    if type_name.startswith(("uint", "int")):
        number = _int_or_none(value)
        return value if number is None else number
    return _lower_hex(value)


def eip712_variable(typed_data: Mapping[str, Any]) -> dict[str, Any]:
    """``eth.eip_712`` from EIP-712 typed data JSON.

    Shape: ``{primary_type, domain{name, version, chain_id, verifying_contract}, message}``.
    Message values follow their declared types: (u)int fields become ints (so
    ``p['amount'] < 100000000`` works on amounts sent as decimal strings) and hex strings are
    lower-cased.
    """
    domain = typed_data.get("domain") or {}
    out_domain: dict[str, Any] = {
        "name": domain.get("name"),
        "version": domain.get("version"),
        "chain_id": _int_or_none(domain.get("chainId")),
        "verifying_contract": _lower_hex(domain.get("verifyingContract")),
    }
    types = typed_data.get("types")
    primary = str(typed_data.get("primaryType") or "")
    message = typed_data.get("message") or {}
    return {
        "primary_type": primary,
        "domain": {k: v for k, v in out_domain.items() if v is not None},
        "message": _typed_value(message, primary, types if isinstance(types, Mapping) else {}),
    }


ETH_TX_FIELDS: Sequence[str] = (
    "from", "to", "data", "value", "gas", "gas_price", "chain_id", "nonce", "max_fee_per_gas",
    "max_priority_fee_per_gas", "max_fee_per_blob_gas", "type", "function_name",
    "function_signature", "contract_call_args",
)  # fmt: skip


def eth_tx_variable(fields: Mapping[str, Any]) -> dict[str, Any]:
    """``eth.tx{…}`` from already-decoded transaction fields, keeping only documented names.

    Addresses and data are lower-cased hex; ``gas_price`` falls back to ``max_fee_per_gas`` for
    EIP-1559 transactions, as the docs describe.
    """
    tx = {k: fields[k] for k in ETH_TX_FIELDS if fields.get(k) is not None}
    for key in ("from", "to", "data"):
        if isinstance(tx.get(key), str):
            tx[key] = tx[key].lower()
    if "gas_price" not in tx and "max_fee_per_gas" in tx:
        tx["gas_price"] = tx["max_fee_per_gas"]
    return tx


def variables(
    *,
    activity: Mapping[str, Any],
    approvers: Sequence[Mapping[str, Any]] = (),
    credentials: Sequence[Mapping[str, Any]] = (),
    now: datetime | None = None,
    wallet: Mapping[str, Any] | None = None,
    wallets: Sequence[Mapping[str, Any]] | None = None,
    wallet_account: Mapping[str, Any] | None = None,
    private_key: Mapping[str, Any] | None = None,
    secrets: Sequence[Mapping[str, Any]] | None = None,
    eth: Mapping[str, Any] | None = None,
    **chains: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Assemble the full variables mapping; absent inputs stay absent (→ MissingField)."""
    env: dict[str, Any] = {
        "activity": activity,
        "approvers": list(approvers),
        "credentials": list(credentials),
        "time": time_variable(now or datetime.now(UTC)),
    }
    optional = {
        "wallet": wallet,
        "wallets": None if wallets is None else list(wallets),
        "wallet_account": wallet_account,
        "private_key": private_key,
        "secrets": None if secrets is None else list(secrets),
        "eth": eth,
        **chains,
    }
    env.update({k: v for k, v in optional.items() if v is not None})
    return env
