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
) -> list[Any]:
    """Run ``stmt`` with an (order, id) keyset cursor, oldest first.

    ``after``/``before`` name an object id; an unknown cursor is a 400.
    """
    page = page or Pagination()
    size = page.size(default)
    cursor = page.after or page.before
    if cursor:
        anchor = session.execute(select(order, ident).where(ident == cursor)).first()
        if anchor is None:
            raise InvalidRequest(f"pagination cursor {cursor!r} does not name an object",
                                 field="paginationOptions")
        key, at = tuple_(order, ident), tuple_(anchor[0], anchor[1])
        if page.after:
            return list(session.scalars(stmt.where(key > at).order_by(order, ident).limit(size)))
        rows = list(session.scalars(
            stmt.where(key < at).order_by(order.desc(), ident.desc()).limit(size)))
        rows.reverse()
        return rows
    return list(session.scalars(stmt.order_by(order, ident).limit(size)))
