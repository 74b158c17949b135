"""Condition variables of one activity: ``wallet``, ``wallets``, ``wallet_account``,
``private_key``, ``eth.tx``, ``eth.eip_7702_authorization``, ``eth.eip_712``, ``solana.tx``,
``tron.tx``, ``bitcoin.tx`` (PROTOCOL.md §8.3) and ``secrets`` (``{id, name, properties}``
of the secrets an ``export_secrets`` names or an ``import_secrets`` brings).

Built from the activity's parameters and the organization's wallet rows. A transaction's
variables come from its chain module (``infra.chains``). ``eth.tx.from`` is the signing address
(the wallet account's, or the Ethereum address of a secp256k1 private key);
``eth.tx.function_name``, ``function_signature`` and ``contract_call_args`` come from the
organization's stored Ethereum ABI for ``eth.tx.to`` (``infra.calldata``).
Anything that cannot be resolved (an unknown ``signWith``, an undecodable transaction) is
simply left out: a policy that reads it evaluates to ``OUTCOME_ERROR``, and the activity
itself fails with the precise error when it executes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra import chains
from infra.calldata import decode_contract_call
from infra.crypto.addresses import AddressFormat, Curve, derive_address
from infra.db.models.secrets import Secret
from infra.db.models.wallets import PrivateKey, Wallet
from infra.errors import WalletError
from infra.policy.variables import (
    activity_kind,
    eip712_variable,
    eth_tx_variable,
    private_key_variable,
    wallet_account_variable,
    wallet_variable,
)
from infra.secrets.store import policy_variable as secret_variable
from infra.wallets.store import Signer, SigningTarget, resolve_sign_with

EIP712 = "PAYLOAD_ENCODING_EIP712"


def _wallet(row: Wallet) -> dict[str, Any]:
    return wallet_variable(row.id, label=row.name, imported=row.imported, exported=row.exported)


def _private_key(row: PrivateKey) -> dict[str, Any]:
    return private_key_variable(
        row.id, tags=row.tags or [], label=row.name, imported=row.imported, exported=row.exported
    )


def _ethereum_address(key: PrivateKey) -> str:
    """The Ethereum address of a secp256k1 private key ("" for other curves)."""
    if key.curve != Curve.SECP256K1:
        return ""
    try:
        return derive_address(Curve.SECP256K1, AddressFormat.ETHEREUM, bytes.fromhex(key.public_key))
    except (WalletError, ValueError):
        return ""


def _signer(
    session: Session, organization_id: str, sign_with: str
) -> tuple[dict[str, Any], str, SigningTarget | None]:
    """The signer's variables, its Ethereum address (``eth.tx.from``) and its target."""
    try:
        target = resolve_sign_with(session, organization_id, sign_with)
    except WalletError:
        return {}, "", None
    found: dict[str, Any] = {}
    sender = ""
    if target.wallet is not None:
        found["wallet"] = _wallet(target.wallet)
    if target.account is not None:
        found["wallet_account"] = wallet_account_variable(target.account.address)
        sender = target.account.address
    if target.private_key is not None:
        found["private_key"] = _private_key(target.private_key)
        sender = _ethereum_address(target.private_key)
    return found, sender, target


def _transaction(
    session: Session,
    organization_id: str,
    params: Mapping[str, Any],
    sender: str,
    target: SigningTarget | None,
) -> dict[str, Any]:
    """``eth``/``solana``/``tron``/``bitcoin`` variables of a ``sign_transaction``."""
    try:
        tx = chains.decode(str(params.get("type", "")), str(params.get("unsignedTransaction", "")))
    except WalletError:
        return {}
    found = tx.policy_variables(None if target is None else Signer.of(target))
    eth_tx = found.get("eth", {}).get("tx")
    if eth_tx is not None:
        eth_tx["from"] = sender.lower()
        call = decode_contract_call(
            session, organization_id, eth_tx.get("to", ""), eth_tx.get("data", ""))
        eth_tx.update(call)
    return found


def _eth(kind: str, params: Mapping[str, Any]) -> dict[str, Any]:
    if kind in ("SIGN_RAW_PAYLOAD", "SIGN_RAW_PAYLOADS") and params.get("encoding") == EIP712:
        payload = params.get("payload") or next(iter(params.get("payloads") or []), "")
        try:
            typed = json.loads(payload)
        except (TypeError, ValueError):
            return {}
        return {"eip_712": eip712_variable(typed)} if isinstance(typed, dict) else {}
    return {}


def _wallets(session: Session, organization_id: str, ids: list[str]) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(Wallet).where(Wallet.id.in_(ids), Wallet.organization_id == organization_id)
    )
    return [_wallet(w) for w in rows]


def _eth_send(session: Session, organization_id: str, kind: str,
              params: Mapping[str, Any]) -> dict[str, Any]:
    """``eth.tx`` of an ``eth_send_transaction`` / ``eth_undelegate_7702`` as asked for (walletd
    fills nonce, gas and fees later, so a policy sees what the caller sent)."""
    sender = str(params.get("from") or "")
    calls = params.get("calls")
    call = calls[0] if isinstance(calls, list) and calls and isinstance(calls[0], dict) else params
    to = sender if kind == "ETH_UNDELEGATE_7702" else str(call.get("to") or "")
    caip2 = str(params.get("caip2") or "")
    view: dict[str, Any] = {"from": sender, "to": to, "data": str(call.get("data") or "0x"),
                            "type": "TYPE_4" if kind == "ETH_UNDELEGATE_7702" else "TYPE_2"}
    for wire, name in (("value", "value"), ("nonce", "nonce"), ("gasLimit", "gas"),
                       ("maxFeePerGas", "max_fee_per_gas"),
                       ("maxPriorityFeePerGas", "max_priority_fee_per_gas")):
        raw = (call if wire == "value" else params).get(wire)
        if isinstance(raw, str) and raw:
            try:
                view[name] = int(raw, 16) if raw.lower().startswith("0x") else int(raw)
            except ValueError:
                continue
    view.setdefault("value", 0)
    if caip2.startswith("eip155:") and caip2[7:].isdigit():
        view["chain_id"] = int(caip2[7:])
    tx = eth_tx_variable(view)
    tx.update(decode_contract_call(session, organization_id, tx.get("to", ""), tx.get("data", "")))
    return {"tx": tx}


def _secrets(session: Session, organization_id: str, kind: str,
             params: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``secrets``: the rows an export names, or the names/properties an import brings."""
    items = params.get("secrets")
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return None
    if kind == "EXPORT_SECRETS":
        ids = [str(i.get("secretId", "")) for i in items]
        rows = session.scalars(select(Secret).where(
            Secret.organization_id == organization_id, Secret.id.in_(ids)))
        return [secret_variable(r) for r in rows]
    if kind == "IMPORT_SECRETS":
        return [{"id": "", "name": str(i.get("name") or ""),
                 "properties": {str(p.get("key")): str(p.get("value"))
                                for p in i.get("staticProperties") or [] if isinstance(p, dict)}}
                for i in items]
    return None


def condition_context(
    session: Session, organization_id: str, activity_type: str, params: Mapping[str, Any]
) -> dict[str, Any]:
    """The condition variables ``activity_type`` with ``params`` exposes."""
    kind = activity_kind(activity_type)
    context: dict[str, Any] = {}
    sign_with = params.get("signWith") or params.get("address") or params.get("from")
    sender = ""
    target = None
    if isinstance(sign_with, str) and sign_with:
        signer, sender, target = _signer(session, organization_id, sign_with)
        context.update(signer)
    wallet_id = params.get("walletId")
    if isinstance(wallet_id, str) and "wallet" not in context:
        wallet = session.get(Wallet, wallet_id)
        if wallet is not None and wallet.organization_id == organization_id:
            context["wallet"] = _wallet(wallet)
    wallet_ids = params.get("walletIds")
    if isinstance(wallet_ids, list):
        context["wallets"] = _wallets(session, organization_id, [str(i) for i in wallet_ids])
    key_id = params.get("privateKeyId")
    if isinstance(key_id, str) and "private_key" not in context:
        key = session.get(PrivateKey, key_id)
        if key is not None and key.organization_id == organization_id:
            context["private_key"] = _private_key(key)
    if kind in ("ETH_SEND_TRANSACTION", "ETH_UNDELEGATE_7702"):
        context["eth"] = _eth_send(session, organization_id, kind, params)
    secrets = _secrets(session, organization_id, kind, params)
    if secrets is not None:
        context["secrets"] = secrets
    if kind == "SIGN_TRANSACTION":
        context.update(_transaction(session, organization_id, params, sender, target))
    eth = _eth(kind, params)
    if eth:
        context.setdefault("eth", {}).update(eth)
    return context
