"""``get_authenticator``: one passkey of the organization."""

from __future__ import annotations

from typing import Any

from infra.auth.webauthn import MSG_AUTHENTICATOR_NOT_FOUND
from infra.db.models.identity import Authenticator
from infra.errors import NotFound
from infra.identity.passkeys import render_authenticator
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    authenticator_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    row = ctx.session.get(Authenticator, params.authenticator_id)
    if row is None or row.organization_id != params.organization_id:
        raise NotFound(MSG_AUTHENTICATOR_NOT_FOUND)
    return {"authenticator": render_authenticator(row)}


SPEC = QuerySpec(path="get_authenticator", params=Params, run=run)
