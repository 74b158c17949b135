"""``create_sub_organization``: a child organization with its root users (and a wallet).

Accepts V8 (current), V7 (the rust-sdk fixture and many deployed clients) and the V4-V6
shapes, which differ only in which root-user fields they carry. The parent's credential
submits; the new organization's root quorum is its ``rootUsers`` with
``rootQuorumThreshold`` (1 ≤ threshold ≤ number of root users). An optional ``wallet`` is
created inside the new organization by the wallet concept's own ``create_wallet`` code.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import Field, model_validator

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.authproxy.signup import spend_signup_token
from infra.db.models.organizations import Organization, OrganizationFeature
from infra.errors import InvalidRequest
from infra.identity.users import UserParams, check_user, create_user
from infra.messaging import queues
from infra.sessions.oidc_login import spend_signup
from infra.validation import limits
from infra.validation.features import FeatureName
from infra.wiremodel import WireModel


class WalletParams(WireModel):
    """``v1WalletParams``."""

    wallet_name: str = Field(max_length=256)
    accounts: list[dict[str, Any]] = Field(default_factory=list)
    mnemonic_length: Any = None


class Params(WireModel):
    """``v1CreateSubOrganizationIntentV8`` / ``V7`` (and the older V4-V6 subsets)."""

    sub_organization_name: str = Field(min_length=1, max_length=256)
    root_users: list[UserParams] = Field(min_length=1)
    root_quorum_threshold: int
    wallet: WalletParams | None = None
    disable_email_recovery: bool | None = None
    disable_email_auth: bool | None = None
    disable_sms_auth: bool | None = None
    disable_otp_email_auth: bool | None = None
    verification_token: str | None = None
    client_signature: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _threshold(self) -> Params:
        if not 1 <= self.root_quorum_threshold <= len(self.root_users):
            raise ValueError(
                f"rootQuorumThreshold must be between 1 and the number of root users "
                f"({len(self.root_users)}); got {self.root_quorum_threshold}"
            )
        return self


#: ``disable*`` flags → the feature stored as "false" in the new organization.
_DISABLED_FEATURES = {
    "disable_email_recovery": FeatureName.EMAIL_RECOVERY,
    "disable_email_auth": FeatureName.EMAIL_AUTH,
    "disable_sms_auth": FeatureName.SMS_AUTH,
    "disable_otp_email_auth": FeatureName.OTP_EMAIL_AUTH,
}


def check(params: Params, ctx: CheckContext) -> None:
    parent = ctx.session.get(Organization, ctx.organization_id)
    limits.SUB_ORGANIZATIONS.check(0, is_sub_organization=bool(parent and parent.parent_id))
    # The sub-organization does not exist yet; it inherits the parent's settings.
    for i, user in enumerate(params.root_users):
        check_user(ctx.session, ctx.organization_id, user, f"parameters.rootUsers[{i}]")


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    if params.verification_token:
        spend_signup_token(ctx, params.verification_token, params.client_signature,
                           params.root_users)
    sub = Organization(
        name=params.sub_organization_name,
        parent_id=ctx.organization_id,
        root_quorum_threshold=params.root_quorum_threshold,
    )
    ctx.session.add(sub)
    ctx.session.flush()
    root_ids = [
        create_user(ctx.session, sub.id, user, ctx.now, is_root=True, field=f"rootUsers[{i}]",
                    on_oidc_token=spend_signup).id
        for i, user in enumerate(params.root_users)
    ]
    for flag, feature in _DISABLED_FEATURES.items():
        if getattr(params, flag):
            ctx.session.add(OrganizationFeature(organization_id=sub.id, name=feature.value, value="false"))
    result: dict[str, Any] = {"subOrganizationId": sub.id, "rootUserIds": root_ids}
    if params.wallet is not None:
        result["wallet"] = _create_wallet(
            params.wallet, dataclasses.replace(ctx, organization_id=sub.id, user_id=root_ids[0])
        )
    return result


def _create_wallet(wallet: WalletParams, ctx: ActivityContext) -> dict[str, Any]:
    """Create the wallet with the wallet concept's ``create_wallet`` handler."""
    try:
        from infra.activities import create_wallet
    except ImportError as ex:  # pragma: no cover - only without the wallet concept
        raise InvalidRequest("this server cannot create wallets; omit wallet", field="wallet") from ex
    params = create_wallet.Params.model_validate(wallet.wire())
    return create_wallet.execute(params, ctx)


def _version(n: int) -> Version:
    suffix = f"V{n}"
    return Version(
        f"ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_{suffix}",
        Params,
        f"createSubOrganizationIntent{suffix}",
        f"createSubOrganizationResult{suffix}",
    )


SPEC = ActivitySpec(
    path="create_sub_organization",
    versions=tuple(_version(n) for n in (8, 7, 6, 5, 4)),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="ORGANIZATION",
    action="CREATE",
)
