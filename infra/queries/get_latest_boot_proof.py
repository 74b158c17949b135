"""``get_latest_boot_proof``: the newest walletd boot record (``appName`` must be
``walletd``: this deployment runs no other app), shaped as ``v1BootProof``."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.audit import boots, log_key
from infra.db.models.audit import AuditBoot
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    app_name: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    if params.app_name != boots.APP_NAME:
        raise NotFound(f"no app {params.app_name!r} here: this deployment runs "
                       f"{boots.APP_NAME!r} (an ordinary process, not an enclave)")
    row = ctx.session.execute(select(AuditBoot).order_by(AuditBoot.created_at.desc())
                              .limit(1)).scalar_one_or_none()
    if row is None:
        raise NotFound("no boot record yet")
    return {"bootProof": boots.boot_proof(row, str(log_key.verifier(ctx.session)))}


SPEC = QuerySpec(path="get_latest_boot_proof", params=Params, run=run)
