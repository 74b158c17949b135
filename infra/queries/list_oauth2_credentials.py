"""``list_oauth2_credentials``: the organization's OAuth 2.0 credentials, oldest first."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.oauth import Oauth2Credential
from infra.queries.spec import QueryContext, QuerySpec
from infra.sessions.oauth2 import render_credential
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    rows = ctx.session.scalars(
        select(Oauth2Credential)
        .where(Oauth2Credential.organization_id == params.organization_id)
        .order_by(Oauth2Credential.created_at, Oauth2Credential.id))
    return {"oauth2Credentials": [render_credential(r) for r in rows]}


SPEC = QuerySpec(path="list_oauth2_credentials", params=Params, run=run)
