"""``delete_private_key_tags``: remove private-key tags from the organization and its keys."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.activities.spec import ActivityContext, ActivitySpec, CheckContext, Version
from infra.db.models.identity import Tag
from infra.identity.directory import TAG_TYPE_PRIVATE_KEY, private_keys_tagged, retag_private_keys, tag_in_org
from infra.messaging import queues
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1DeletePrivateKeyTagsIntent``."""

    private_key_tag_ids: list[str] = Field(min_length=1)


def _tags(params: Params, session: Any, organization_id: str) -> list[Tag]:
    return [
        tag_in_org(session, organization_id, t, TAG_TYPE_PRIVATE_KEY)
        for t in dict.fromkeys(params.private_key_tag_ids)
    ]


def check(params: Params, ctx: CheckContext) -> None:
    _tags(params, ctx.session, ctx.organization_id)


def execute(params: Params, ctx: ActivityContext) -> dict[str, Any]:
    tags = _tags(params, ctx.session, ctx.organization_id)
    tag_ids = [t.id for t in tags]
    key_ids = private_keys_tagged(ctx.session, ctx.organization_id, tag_ids)
    retag_private_keys(ctx.session, ctx.organization_id, key_ids, remove=tag_ids)
    for tag in tags:
        ctx.session.delete(tag)
    return {"privateKeyTagIds": tag_ids, "privateKeyIds": key_ids}


SPEC = ActivitySpec(
    path="delete_private_key_tags",
    versions=(
        Version(
            "ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS",
            Params,
            "deletePrivateKeyTagsIntent",
            "deletePrivateKeyTagsResult",
        ),
    ),
    execute=execute,
    check=check,
    pool=queues.ACCOUNTS,
    resource="PRIVATE_KEY",
    action="DELETE",
)
