"""``update_private_key_tag``: rename a private-key tag and add or remove keys."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.directory import (
    TAG_TYPE_PRIVATE_KEY,
    check_tag_name_free,
    private_keys_in_org,
    retag_private_keys,
    tag_in_org,
)
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1UpdatePrivateKeyTagIntent``."""

    private_key_tag_id: str
    new_private_key_tag_name: str | None = Field(default=None, max_length=256)
    add_private_key_ids: list[str] = Field(default_factory=list)
    remove_private_key_ids: list[str] = Field(default_factory=list)


def _validate(params: Params, session: Any, organization_id: str) -> None:
    tag_in_org(session, organization_id, params.private_key_tag_id, TAG_TYPE_PRIVATE_KEY)
    private_keys_in_org(
        session, organization_id, [*params.add_private_key_ids, *params.remove_private_key_ids]
    )
    if params.new_private_key_tag_name:
        check_tag_name_free(
            session,
            organization_id,
            TAG_TYPE_PRIVATE_KEY,
            params.new_private_key_tag_name,
            except_id=params.private_key_tag_id,
        )


def check(params: Params, ctx: CheckContext) -> None:
    _validate(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    _validate(params, ctx.session, ctx.organization_id)
    tag = tag_in_org(ctx.session, ctx.organization_id, params.private_key_tag_id, TAG_TYPE_PRIVATE_KEY)
    if params.new_private_key_tag_name:
        tag.name = params.new_private_key_tag_name
    tag.updated_at = ctx.now
    retag_private_keys(ctx.session, ctx.organization_id, params.add_private_key_ids, add=[tag.id])
    retag_private_keys(ctx.session, ctx.organization_id, params.remove_private_key_ids, remove=[tag.id])
    return {"privateKeyTagId": tag.id}


SPEC = ActivitySpec(
    path="update_private_key_tag",
    versions=(
        Version(
            "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG",
            Params,
            "updatePrivateKeyTagIntent",
            "updatePrivateKeyTagResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="UPDATE",
)
