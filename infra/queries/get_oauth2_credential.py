"""``get_oauth2_credential``: one OAuth 2.0 credential of the organization."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from infra.queries.spec import QueryContext, QuerySpec
from infra.sessions.oauth2 import find_credential, render_credential
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    oauth2_credential_id: str = Field(min_length=1, max_length=64)


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    row = find_credential(ctx.session, [params.organization_id], params.oauth2_credential_id)
    return {"oauth2Credential": render_credential(row)}


SPEC = QuerySpec(path="get_oauth2_credential", params=Params, run=run)
