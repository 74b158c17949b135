"""``import_wallet``: decrypt a mnemonic sealed to the import target and store the wallet."""

from __future__ import annotations

from typing import Any

from pydantic import Field
from sqlalchemy import select

from infra.activities.common import user_in_org
from infra.activities.init_import_wallet import KIND, own_user
from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.crypto import bundles, hd, hpke
from infra.db.models.wallets import ImportTarget
from infra.errors import FailedPrecondition
from infra.messaging import queues
from infra.wallets import store
from infra.wiremodel import WireModel
from infra.worker_services import custody_of


class Params(WireModel):
    """``v1ImportWalletIntent``."""

    user_id: str
    wallet_name: str = Field(max_length=256)
    encrypted_bundle: str
    accounts: list[store.AccountParams] = Field(default_factory=list)


def import_target(session: Any, organization_id: str, user_id: str, kind: str = KIND,
                  init_path: str = "init_import_wallet") -> ImportTarget:
    """The user's pending import target key of ``kind`` (a 400 naming the init call if none)."""
    target = session.scalars(
        select(ImportTarget)
        .where(ImportTarget.organization_id == organization_id,
               ImportTarget.user_id == user_id, ImportTarget.kind == kind)
        .order_by(ImportTarget.created_at.desc())
        .limit(1)
    ).first()
    if target is None:
        raise FailedPrecondition(
            f"no import in progress for this user; call {init_path} first and encrypt "
            "to its importBundle"
        )
    return target


def check(params: Params, ctx: CheckContext) -> None:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)
    store.validate_accounts(params.accounts)
    import_target(ctx.session, ctx.organization_id, params.user_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    user_in_org(ctx.session, ctx.organization_id, params.user_id)
    own_user(params.user_id, ctx.user_id)
    specs = store.validate_accounts(params.accounts)
    custody = custody_of(ctx.services)
    target = import_target(ctx.session, ctx.organization_id, params.user_id)
    target_key = hpke.private_key_from_bytes(custody.open_row(target))
    plaintext = bundles.open_encrypted_bundle(params.encrypted_bundle, target_key)
    mnemonic_secret, passphrase_secret = bundles.split_wallet_plaintext(plaintext)
    mnemonic_secret = hd.normalize_mnemonic(mnemonic_secret)
    wallet = store.create_wallet(ctx.session, custody, ctx.organization_id, params.wallet_name,
                                 mnemonic_secret, passphrase_secret, imported=True)
    accounts = store.derive_accounts(ctx.session, wallet, mnemonic_secret, passphrase_secret,
                                     specs, ctx.now)
    ctx.session.delete(target)
    return {"walletId": wallet.id, "addresses": [a.address for a in accounts]}


SPEC = ActivitySpec(
    path="import_wallet",
    versions=(Version("ACTIVITY_TYPE_IMPORT_WALLET", Params, "importWalletIntent",
                      "importWalletResult"),),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="WALLET",
    action="IMPORT",
)
