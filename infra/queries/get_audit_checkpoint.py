"""``get_audit_checkpoint`` (walletd's own): the latest signed checkpoint of the audit log."""

from __future__ import annotations

from typing import Any

from infra.audit import checkpoints, log_key, openapi
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    verifier = log_key.verifier(ctx.session)
    return {"checkpoint": checkpoints.latest(ctx.session).to_wire(),
            "verifierKey": str(verifier), "origin": verifier.name}


SPEC = QuerySpec(path="get_audit_checkpoint", params=Params, run=run, document=openapi.operation(
    "get_checkpoint", "Get the audit log's latest checkpoint",
    "The newest signed checkpoint of the deployment's verifiable activity log (docs/AUDIT.md).",
    {}, {"checkpoint": openapi.CHECKPOINT_REF, "verifierKey": {"type": "string"},
         "origin": {"type": "string"}}))
