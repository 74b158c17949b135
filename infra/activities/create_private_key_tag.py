"""``create_private_key_tag``: a named private-key tag, optionally applied at once."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.identity.directory import (
    TAG_TYPE_PRIVATE_KEY,
    check_tag_name_free,
    create_tag,
    private_keys_in_org,
    retag_private_keys,
)
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1CreatePrivateKeyTagIntent``."""

    private_key_tag_name: str = Field(min_length=1, max_length=256)
    private_key_ids: list[str] = Field(default_factory=list)


def check(params: Params, ctx: CheckContext) -> None:
    private_keys_in_org(ctx.session, ctx.organization_id, params.private_key_ids)
    check_tag_name_free(ctx.session, ctx.organization_id, TAG_TYPE_PRIVATE_KEY, params.private_key_tag_name)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    key_ids = private_keys_in_org(ctx.session, ctx.organization_id, params.private_key_ids)
    tag = create_tag(
        ctx.session, ctx.organization_id, TAG_TYPE_PRIVATE_KEY, params.private_key_tag_name, ctx.now
    )
    retag_private_keys(ctx.session, ctx.organization_id, key_ids, add=[tag.id])
    return {"privateKeyTagId": tag.id, "privateKeyIds": key_ids}


SPEC = ActivitySpec(
    path="create_private_key_tag",
    versions=(
        Version(
            "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
            Params,
            "createPrivateKeyTagIntent",
            "createPrivateKeyTagResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="CREATE",
)
