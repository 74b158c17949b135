"""Wire views: ``v1Wallet``, ``v1WalletAccount``, ``v1PrivateKey``."""

from __future__ import annotations

from typing import Any

from infra.clock import wire_timestamp
from infra.db.models.wallets import PrivateKey, Wallet, WalletAccount

_CAIP2 = {
    "ADDRESS_FORMAT_ETHEREUM": "eip155",
    "ADDRESS_FORMAT_SOLANA": "solana",
    "ADDRESS_FORMAT_COSMOS": "cosmos",
    "ADDRESS_FORMAT_SEI": "cosmos",
    "ADDRESS_FORMAT_TRON": "tron",
    "ADDRESS_FORMAT_SUI": "sui",
    "ADDRESS_FORMAT_APTOS": "aptos",
    "ADDRESS_FORMAT_XLM": "stellar",
    "ADDRESS_FORMAT_XRP": "xrpl",
}


def render_wallet(wallet: Wallet) -> dict[str, Any]:
    """``v1Wallet``."""
    return {
        "walletId": wallet.id,
        "walletName": wallet.name,
        "createdAt": wire_timestamp(wallet.created_at),
        "updatedAt": wire_timestamp(wallet.updated_at),
        "exported": bool(wallet.exported),
        "imported": bool(wallet.imported),
    }


def render_account(account: WalletAccount, wallet: Wallet | None = None) -> dict[str, Any]:
    """``v1WalletAccount`` (``walletDetails`` when ``wallet`` is given)."""
    out: dict[str, Any] = {
        "walletAccountId": account.id,
        "organizationId": account.organization_id,
        "walletId": account.wallet_id,
        "curve": account.curve,
        "pathFormat": account.path_format,
        "path": account.path,
        "addressFormat": account.address_format,
        "address": account.address,
        "createdAt": wire_timestamp(account.created_at),
        "updatedAt": wire_timestamp(account.updated_at),
        "publicKey": account.public_key,
    }
    if account.name:
        out["name"] = account.name
    caip2 = _CAIP2.get(account.address_format)
    if caip2 is None and account.address_format.startswith(("ADDRESS_FORMAT_BITCOIN",
                                                            "ADDRESS_FORMAT_DOGE")):
        caip2 = "bip122"
    if caip2:
        out["caip2Prefix"] = caip2
    if wallet is not None:
        out["walletDetails"] = render_wallet(wallet)
    return out


def render_private_key(key: PrivateKey) -> dict[str, Any]:
    """``v1PrivateKey``."""
    return {
        "privateKeyId": key.id,
        "publicKey": key.public_key,
        "privateKeyName": key.name,
        "curve": key.curve,
        "addresses": list(key.addresses or []),
        "privateKeyTags": list(key.tags or []),
        "createdAt": wire_timestamp(key.created_at),
        "updatedAt": wire_timestamp(key.updated_at),
        "exported": bool(key.exported),
        "imported": bool(key.imported),
    }
