"""``paginationOptions {limit, before, after}`` for list queries (cursor = an object id)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select, tuple_
from sqlalchemy.orm import InstrumentedAttribute

from infra.errors import InvalidRequest
from infra.wiremodel import WireModel


class Pagination(WireModel):
    """``v1Pagination``: limit is a string "1-100", default 10."""

    limit: str | None = None
    before: str | None = None
    after: str | None = None

    def size(self, default: int = 10) -> int:
        """The page size, validated."""
        if self.limit in (None, ""):
            return default
        try:
            value = int(str(self.limit))
        except ValueError as ex:
            raise InvalidRequest("paginationOptions.limit must be a number between 1 and 100",
                                 field="paginationOptions.limit") from ex
        if not 1 <= value <= 100:
            raise InvalidRequest("paginationOptions.limit must be between 1 and 100",
                                 field="paginationOptions.limit")
        return value


def fetch_page(
    session: Any,
    stmt: Select[Any],
    order: InstrumentedAttribute[Any],
    ident: InstrumentedAttribute[Any],
    page: Pagination | None,
    default: int = 10,
    newest_first: bool = False,
) -> list[Any]:
    """Run ``stmt`` with an (order, id) keyset cursor.

    Pages run oldest first, or newest first with ``newest_first``; ``after`` continues in
    that direction from the named object and ``before`` goes back. An unknown cursor is a 400.
    """
    page = page or Pagination()
    size = page.size(default)
    key = tuple_(order, ident)
    forward = (order.desc(), ident.desc()) if newest_first else (order, ident)
    backward = (order, ident) if newest_first else (order.desc(), ident.desc())
    cursor = page.after or page.before
    if not cursor:
        return list(session.scalars(stmt.order_by(*forward).limit(size)))
    anchor = session.execute(select(order, ident).where(ident == cursor)).first()
    if anchor is None:
        raise InvalidRequest(f"pagination cursor {cursor!r} does not name an object",
                             field="paginationOptions")
    at = tuple_(anchor[0], anchor[1])
    if page.after:
        beyond = key < at if newest_first else key > at
        return list(session.scalars(stmt.where(beyond).order_by(*forward).limit(size)))
    behind = key > at if newest_first else key < at
    rows = list(session.scalars(stmt.where(behind).order_by(*backward).limit(size)))
    rows.reverse()
    return rows
