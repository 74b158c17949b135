"""Wallet and key operations shared by the activity handlers (not an activity type)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from pydantic import Field
from sqlalchemy import Select, bindparam, func, inspect, select
from sqlalchemy.orm import Session

from infra.clock import new_id
from infra.crypto import bundles, hd
from infra.crypto.addresses import (
    AddressFormat,
    Curve,
    compressed_public_key,
    derive_address,
    parse_address_format,
    parse_curve,
)
from infra.crypto.signing import public_key_from_private
from infra.db.announced import AnnouncedCache
from infra.db.models.organizations import Organization
from infra.db.models.wallets import PrivateKey, PrivateKeyAddress, Wallet, WalletAccount
from infra.errors import AlreadyExists, InvalidRequest, NotFound, WalletError
from infra.validation import caps
from infra.validation.limits import PRIVATE_KEYS, WALLETS
from infra.wallets.custody import Custody
from infra.wiremodel import WireModel

PATH_FORMAT_BIP32 = "PATH_FORMAT_BIP32"


class AccountParams(WireModel):
    """``v1WalletAccountParams``."""

    curve: str
    path_format: str = PATH_FORMAT_BIP32
    path: str = Field(max_length=256)
    address_format: str
    name: str | None = Field(default=None, max_length=256)


class PrivateKeyParams(WireModel):
    """``v1PrivateKeyParams``."""

    private_key_name: str = Field(min_length=1, max_length=256)
    curve: str
    private_key_tags: list[str] = Field(default_factory=list, max_length=caps.TAGS)
    address_formats: list[str] = Field(default_factory=list, max_length=caps.ADDRESS_FORMATS)


@dataclass(frozen=True)
class AccountSpec:
    """Validated account parameters."""

    curve: Curve
    path: str
    address_format: AddressFormat
    name: str | None


def validate_accounts(accounts: list[AccountParams], field: str = "accounts") -> list[AccountSpec]:
    """Validate every account's enums, path and curve/format pairing (fast 400s).

    The same derivation (curve, path, address format) twice in one request is a 400.
    """
    specs = []
    seen: set[tuple[str, str, str]] = set()
    for i, account in enumerate(accounts):
        where = f"{field}[{i}]"
        curve = parse_curve(account.curve, field=f"{where}.curve")
        if curve is Curve.P256:
            raise InvalidRequest(
                "wallet accounts use CURVE_SECP256K1 or CURVE_ED25519", field=f"{where}.curve"
            )
        if account.path_format != PATH_FORMAT_BIP32:
            raise InvalidRequest(
                f"unknown pathFormat {account.path_format!r}; send PATH_FORMAT_BIP32",
                field=f"{where}.pathFormat",
            )
        hd.parse_path(account.path, curve)
        fmt = parse_address_format(account.address_format, field=f"{where}.addressFormat")
        # A zero key cannot be encoded; use a fixed valid point to test the pairing only.
        probe = bytes.fromhex(_PROBE[curve])
        derive_address(curve, fmt, probe)
        ident = (curve.value, account.path, fmt.value)
        if ident in seen:
            raise InvalidRequest(
                f"{where} repeats an earlier account ({curve.value} {account.path} "
                f"{fmt.value}); list each derivation once", field=where)
        seen.add(ident)
        specs.append(AccountSpec(curve, account.path, fmt, account.name))
    return specs


_PROBE = {
    Curve.SECP256K1: "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798",
    Curve.ED25519: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
}


def is_sub_organization(session: Session, organization_id: str) -> bool:
    org = session.get(Organization, organization_id)
    return bool(org is not None and org.parent_id)


def check_wallet_limit(session: Session, organization_id: str, adding: int = 1) -> None:
    count = session.scalar(
        select(func.count()).select_from(Wallet).where(Wallet.organization_id == organization_id)
    )
    WALLETS.check(int(count or 0), adding=adding,
                  is_sub_organization=is_sub_organization(session, organization_id))


def wallet_in_org(session: Session, organization_id: str, wallet_id: str) -> Wallet:
    """The wallet ``wallet_id`` of the organization, or a 404."""
    wallet = session.get(Wallet, wallet_id)
    if wallet is None or wallet.organization_id != organization_id:
        raise NotFound(f"wallet not found: {wallet_id}")
    return wallet


def create_wallet(
    session: Session,
    custody: Custody,
    organization_id: str,
    name: str,
    mnemonic_secret: str,
    passphrase_secret: str = "",
    *,
    imported: bool = False,
) -> Wallet:
    """Store a wallet with its mnemonic sealed."""
    if not name.strip():
        raise InvalidRequest("walletName must not be empty", field="walletName")
    check_wallet_limit(session, organization_id)
    wallet = Wallet(id=new_id(), organization_id=organization_id, name=name, imported=imported)
    custody.seal_row(wallet, bundles.join_wallet_plaintext(mnemonic_secret, passphrase_secret))
    session.add(wallet)
    session.flush()
    return wallet


def open_wallet(custody: Custody, wallet: Wallet) -> tuple[str, str]:
    """The wallet's ``(mnemonic, passphrase)``."""
    return bundles.split_wallet_plaintext(custody.open_row(wallet))


def derive_accounts(
    session: Session,
    wallet: Wallet,
    mnemonic_secret: str,
    passphrase_secret: str,
    specs: list[AccountSpec],
    now: datetime,
) -> list[WalletAccount]:
    """Derive and store accounts; an existing derivation is a 409."""
    seed_secret = hd.mnemonic_to_seed(mnemonic_secret, passphrase_secret)
    existing = {
        (a.curve, a.path, a.address_format)
        for a in session.scalars(select(WalletAccount).where(WalletAccount.wallet_id == wallet.id))
    }
    created = []
    for i, spec in enumerate(specs):
        # Distinct timestamps keep the (created_at, id) listing order = creation order.
        at = now + timedelta(microseconds=i)
        ident = (spec.curve.value, spec.path, spec.address_format.value)
        if ident in existing:
            raise AlreadyExists(
                f"wallet account already exists: {spec.curve.value} {spec.path} "
                f"{spec.address_format.value}"
            )
        existing.add(ident)
        key = hd.derive_key(seed_secret, spec.curve, spec.path)
        account = WalletAccount(
            organization_id=wallet.organization_id,
            wallet_id=wallet.id,
            curve=spec.curve.value,
            path_format=PATH_FORMAT_BIP32,
            path=spec.path,
            address_format=spec.address_format.value,
            address=derive_address(spec.curve, spec.address_format, key.public_key),
            public_key=key.public_key.hex(),
            name=spec.name,
            created_at=at,
            updated_at=at,
        )
        session.add(account)
        created.append(account)
    session.flush()
    return created


def create_private_key(
    session: Session,
    custody: Custody,
    organization_id: str,
    params: PrivateKeyParams,
    private_key_secret: bytes,
    *,
    imported: bool = False,
) -> PrivateKey:
    """Store a standalone key (sealed) with its address index."""
    curve = parse_curve(params.curve)
    public = public_key_from_private(curve, private_key_secret)
    formats = [parse_address_format(f, field="addressFormats") for f in params.address_formats]
    addresses = [{"format": f.value, "address": derive_address(curve, f, public)} for f in formats]
    key = PrivateKey(
        id=new_id(),
        organization_id=organization_id,
        name=params.private_key_name,
        curve=curve.value,
        public_key=public.hex(),
        addresses=addresses,
        tags=list(params.private_key_tags),
        imported=imported,
    )
    custody.seal_row(key, private_key_secret)
    session.add(key)
    session.flush()
    for entry in addresses:
        session.add(PrivateKeyAddress(private_key_id=key.id, address_format=entry["format"],
                                      organization_id=organization_id, address=entry["address"]))
    return key


def private_key_in_org(session: Session, organization_id: str, private_key_id: str) -> PrivateKey:
    """The private key ``private_key_id`` of the organization, or a 404."""
    key = session.get(PrivateKey, private_key_id)
    if key is None or key.organization_id != organization_id:
        raise NotFound(f"private key not found: {private_key_id}")
    return key


def account_by_address(session: Session, organization_id: str, address: str) -> WalletAccount:
    """The organization's wallet account with ``address``, or a 404."""
    account = session.scalars(
        select(WalletAccount)
        .where(WalletAccount.organization_id == organization_id,
               _address_matches(WalletAccount.address, address))
        .order_by(WalletAccount.created_at)
        .limit(1)
    ).first()
    if account is None:
        raise NotFound(f"wallet account not found: {address}")
    return account


def check_private_key_limit(session: Session, organization_id: str, adding: int) -> None:
    count = session.scalar(
        select(func.count()).select_from(PrivateKey)
        .where(PrivateKey.organization_id == organization_id)
    )
    PRIVATE_KEYS.check(int(count or 0), adding=adding,
                       is_sub_organization=is_sub_organization(session, organization_id))


# --- signWith resolution -----------------------------------------------------------------


@dataclass(frozen=True)
class SigningTarget:
    """What ``signWith`` named: a wallet account or a private key."""

    curve: Curve
    address_format: AddressFormat | None
    account: WalletAccount | None = None
    private_key: PrivateKey | None = None
    wallet: Wallet | None = None


def _address_matches(column: Any, address: str) -> Any:
    """Exact match, or case-insensitive for 0x-hex addresses (EIP-55 checksums vary)."""
    if address.startswith(("0x", "0X")):
        return func.lower(column) == address.lower()
    return column == address


def _account_lookup(address_matches: Any) -> Select[WalletAccount, Wallet]:
    """The oldest account of an organization whose address matches, with its wallet."""
    return (
        select(WalletAccount, Wallet)
        .join(Wallet, Wallet.id == WalletAccount.wallet_id)
        .where(WalletAccount.organization_id == bindparam("organization_id"), address_matches)
        .order_by(WalletAccount.created_at)
        .limit(1)
    )


# Built once: every signature resolves its signWith (in the ingress's check and the worker).
_ACCOUNT_BY_ADDRESS: Final = _account_lookup(WalletAccount.address == bindparam("address"))
#: 0x-hex addresses match case-insensitively (EIP-55 checksums vary); binds it lowercased.
_ACCOUNT_BY_HEX_ADDRESS: Final = _account_lookup(
    func.lower(WalletAccount.address) == bindparam("address"))


def _account_with_wallet(session: Session, lookup: Select[WalletAccount, Wallet],
                         organization_id: str, address: str) -> tuple[WalletAccount, Wallet] | None:
    row = session.execute(lookup, {"organization_id": organization_id, "address": address}).first()
    return (row[0], row[1]) if row is not None else None


@dataclass(frozen=True)
class Signer:
    """The public facts of the key ``signWith`` names; they never change.

    Attributes:
        curve: the key's curve.
        address_format: the account's format, or the format of the private-key address
            ``signWith`` named (``None`` for a private key named by id).
        is_account: a wallet account (else a private key).
        public_key: compressed secp256k1 (33 bytes) or ed25519 (32 bytes) public key.
        address: the account's address ("" for a private key).
    """

    curve: Curve
    address_format: AddressFormat | None
    is_account: bool
    public_key: bytes
    address: str = ""

    @classmethod
    def of(cls, target: SigningTarget) -> Signer:
        """The signer of a resolved ``signWith`` (from its row; no key material)."""
        row = target.account if target.account is not None else target.private_key
        assert row is not None
        public_key = bytes.fromhex(row.public_key)
        with contextlib.suppress(WalletError):
            public_key = compressed_public_key(target.curve, public_key)
        return cls(target.curve, target.address_format, target.account is not None, public_key,
                   target.account.address if target.account is not None else "")


_SIGNERS_MAX: Final = 10_000
#: (organization id, signWith) -> the public facts of names that resolved.
_signers: dict[tuple[str, str], Signer] = {}


def signer(session: Session, organization_id: str, sign_with: str) -> Signer:
    """The public facts of the key ``signWith`` names, for read-only checks.

    Remembered per process once found: what a key is never changes, so the ingress's check
    of a signer it saw before needs no read. A key deleted since still passes this check;
    the executor resolves the name again and fails the activity with the same ``NotFound``.
    """
    known = _signers.get((organization_id, sign_with))
    if known is not None:
        return known
    found = Signer.of(resolve_sign_with(session, organization_id, sign_with))
    if len(_signers) >= _SIGNERS_MAX:
        _signers.clear()
    _signers[(organization_id, sign_with)] = found
    return found


def signer_kind(session: Session, organization_id: str,
                sign_with: str) -> tuple[Curve, AddressFormat | None]:
    """The curve and address format of the key ``signWith`` names (see :func:`signer`)."""
    found = signer(session, organization_id, sign_with)
    return found.curve, found.address_format


#: (organization id, signWith) -> what it resolved to, per process: detached copies of the
#: rows, forgotten whenever one of these tables changes (``infra.db.announced``).
TARGETS: Final[AnnouncedCache[tuple[str, str], SigningTarget]] = AnnouncedCache(
    "signers", ("wallets", "wallet_accounts", "private_keys", "private_key_addresses"))


def _copy(row: Any) -> Any:
    """A transient copy of a loaded row (no session: a rollback can never expire it)."""
    if row is None:
        return None
    return type(row)(**{a.key: getattr(row, a.key) for a in inspect(type(row)).column_attrs})


def resolve_sign_with(session: Session, organization_id: str, sign_with: str) -> SigningTarget:
    """Find the key ``signWith`` names: account address, private key id or key address.

    Remembered per process while the database announces changes to the tables it reads
    (a key, account or wallet deleted or rewrapped since is read again).

    Raises:
        NotFound: nothing in the organization matches.
    """
    known = TARGETS.get((organization_id, sign_with))
    if known is not None:
        return known
    token = TARGETS.token()
    found = _resolve_sign_with(session, organization_id, sign_with)
    if token is not None:
        TARGETS.put((organization_id, sign_with),
                    SigningTarget(found.curve, found.address_format, _copy(found.account),
                                  _copy(found.private_key), _copy(found.wallet)), token)
    return found


def _resolve_sign_with(session: Session, organization_id: str, sign_with: str) -> SigningTarget:
    if not sign_with:
        raise InvalidRequest(
            "signWith is required: a wallet account address, a private key id or address",
            field="signWith",
        )
    found = _account_with_wallet(session, _ACCOUNT_BY_ADDRESS, organization_id, sign_with)
    if found is None and sign_with.startswith(("0x", "0X")):
        found = _account_with_wallet(session, _ACCOUNT_BY_HEX_ADDRESS, organization_id,
                                     sign_with.lower())
    if found is not None:
        account, wallet = found
        return SigningTarget(Curve(account.curve), AddressFormat(account.address_format),
                             account=account, wallet=wallet)
    key = session.get(PrivateKey, sign_with)
    fmt: AddressFormat | None = None
    if key is None or key.organization_id != organization_id:
        entry = session.scalars(
            select(PrivateKeyAddress)
            .where(PrivateKeyAddress.organization_id == organization_id,
                   _address_matches(PrivateKeyAddress.address, sign_with))
            .limit(1)
        ).first()
        key = session.get(PrivateKey, entry.private_key_id) if entry else None
        fmt = AddressFormat(entry.address_format) if entry else None
    if key is None or key.organization_id != organization_id:
        raise NotFound(
            f"signWith {sign_with!r} names no wallet account address, private key id or "
            "private key address in this organization"
        )
    return SigningTarget(Curve(key.curve), fmt, private_key=key)


def signing_secret(custody: Custody, target: SigningTarget) -> bytes:
    """The private key behind a :class:`SigningTarget` (derivation cached per process)."""
    if target.private_key is not None:
        return custody.open_row(target.private_key)
    assert target.account is not None and target.wallet is not None
    mnemonic_secret, passphrase_secret = open_wallet(custody, target.wallet)
    seed_secret = hd.mnemonic_to_seed(mnemonic_secret, passphrase_secret)
    return hd.derive_key(seed_secret, target.curve, target.account.path).private_key_secret
