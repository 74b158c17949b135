"""``list_email_events``: what walletd's SMTP hop saw for the emails sent to one address.

Events of the organization and its direct sub-organizations (where its users' codes and
links are sent), most recent first. walletd's own hop only: ``Send``, ``Delivery`` (with the
relay's reply), ``DeliveryDelay``, ``Bounce`` (``infra.sessions.email_events``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from infra.db.models.email_events import EmailEvent
from infra.errors import InvalidRequest
from infra.queries.pagination import Pagination, fetch_page
from infra.queries.spec import QueryContext, QuerySpec
from infra.sessions import email_events
from infra.sessions.params import organizations_below
from infra.wiremodel import WireModel

EVENT_TYPES = (email_events.SEND, email_events.DELIVERY, email_events.DELAY, email_events.BOUNCE)


class Params(WireModel):
    """``v1ListEmailEventsRequest``."""

    organization_id: str
    email: str
    event_type: str | None = None
    pagination_options: Pagination | None = None


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    if params.event_type and params.event_type not in EVENT_TYPES:
        raise InvalidRequest(f"eventType must be one of {', '.join(EVENT_TYPES)} (walletd sees "
                             "its own SMTP hop only)", field="eventType")
    stmt = select(EmailEvent).where(
        EmailEvent.organization_id.in_(organizations_below(ctx.session, params.organization_id)),
        EmailEvent.to_address == params.email.strip().lower())
    if params.event_type:
        stmt = stmt.where(EmailEvent.event_type == params.event_type)
    rows = fetch_page(ctx.session, stmt, EmailEvent.at, EmailEvent.id, params.pagination_options,
                      newest_first=True)
    return {"emailEvents": [email_events.render(r) for r in rows]}


SPEC = QuerySpec(path="list_email_events", params=Params, run=run)
