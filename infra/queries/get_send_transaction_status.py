"""``get_send_transaction_status``: where a sent transaction stands (what ``pollTransactionStatus``
of ``@turnkey/core`` reads)."""

from __future__ import annotations

from typing import Any

from infra.broadcast import status
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    """``v1GetSendTransactionStatusRequest``."""

    organization_id: str
    send_transaction_status_id: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    return status.render(status.in_org(ctx.session, params.organization_id,
                                       params.send_transaction_status_id))


SPEC = QuerySpec(path="get_send_transaction_status", params=Params, run=run)
