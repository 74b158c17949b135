"""An organization's ancestry: itself, its parent, grandparent, … up to the root.

An organization's parent is fixed when it is created and never changes, so a chain that
reached a stored root is remembered per process: authentication (the credential may live
in the parent) and the webhook outbox (parents receive their children's events) walk it
on every activity.
"""

from __future__ import annotations

from typing import Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.db.models.organizations import Organization

#: Organizations nest shallowly; the walk stops here even if data were cyclic.
MAX_DEPTH: Final = 32
_CHAINS_MAX: Final = 10_000
#: Complete chains already walked, by organization id.
_CHAINS: dict[str, tuple[str, ...]] = {}
_PARENT: Final = select(Organization.parent_id).where(Organization.id == bindparam("id"))


def remembered_chain(organization_id: str) -> list[str] | None:
    """:func:`organization_chain` when it is remembered (no session needed); else ``None``."""
    known = _CHAINS.get(organization_id)
    return None if known is None else list(known)


def organization_chain(session: Session, organization_id: str) -> list[str]:
    """``organization_id`` followed by its ancestors, nearest first.

    Empty when ``organization_id`` is not stored. A chain is remembered only once its walk
    reached a stored root, never a guess about rows that may appear later.
    """
    known = remembered_chain(organization_id)
    if known is not None:
        return known
    chain: list[str] = []
    current = organization_id
    while len(chain) <= MAX_DEPTH:
        row = session.execute(_PARENT, {"id": current}).first()
        if row is None:
            return chain  # not stored (yet): incomplete, not remembered
        chain.append(current)
        parent = row[0]
        if parent is None:
            _remember(organization_id, chain)
            return chain
        if parent in chain:
            return chain  # cyclic data: never remembered
        current = parent
    return chain  # deeper than MAX_DEPTH: not remembered


def _remember(organization_id: str, chain: list[str]) -> None:
    if len(_CHAINS) >= _CHAINS_MAX:
        _CHAINS.clear()
    _CHAINS[organization_id] = tuple(chain)
