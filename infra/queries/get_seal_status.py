"""``get_seal_status`` (walletd's own query): the seal of the deployment's worker processes,
as they last reported it (``infra.seal.reports``); what the operator's console shows as the
service's seal state.

Answers ``{sealed, sealType, rootKeyVersion, threshold, progress, processes: [{role, sealed,
progress, reportedAt}]}``: ``sealed`` is true while any reporting process is sealed and null
when none has reported within the last 15 s (the console then says so). No secret, address or
host name is answered. Only the operator may read it (a credential of a top-level organization,
``infra.queries._operator``): a sub-organization's credential gets 403, as for
``get_service_status``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from infra.clock import as_utc, now
from infra.db.models.seal import FRESH_S, SealReport
from infra.queries._operator import require_operator
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    require_operator(ctx, "get_seal_status")
    rows = list(ctx.session.scalars(select(SealReport).where(
        SealReport.reported_at >= now() - timedelta(seconds=FRESH_S)).order_by(SealReport.role)))
    processes = [{"role": r.role, "sealed": r.sealed, "progress": r.progress,
                  "reportedAt": as_utc(r.reported_at).isoformat(timespec="seconds")}
                 for r in rows]
    newest = max(rows, key=lambda r: (r.root_version, as_utc(r.reported_at)), default=None)
    return {
        "sealed": any(r.sealed for r in rows) if rows else None,
        "sealType": newest.seal_type if newest else "",
        "rootKeyVersion": newest.root_version if newest else 0,
        "threshold": newest.threshold if newest else 0,
        "progress": max((r.progress for r in rows), default=0),
        "processes": processes,
    }


SPEC = QuerySpec(path="get_seal_status", params=Params, run=run)
