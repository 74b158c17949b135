"""Appending staged leaves to the tree: dense indexes in one place, off the hot path.

Writers only insert into ``audit_staged`` (their transaction's own rows; no shared counter).
:func:`integrate` — run by one worker loop at a time, and safe if two race — locks the
``audit_state`` row, takes the staged rows that have committed (oldest first), gives each the
next index and the index of its activity's previous leaf (``prev``), stores the leaf, the
perfect-subtree nodes it completes (``infra.audit.merkle.append_nodes``; only the tree's right
edge is read), deletes the staged rows and moves the size, in one transaction. A change that
commits while a batch is being appended is appended by the next batch: order in the log is
the order of sequencing, and every leaf commits to its own index.

Two changes to one activity are ordered by its row lock (the second transaction claims the
row only once the first committed), so their staged ids, and therefore their leaves, keep the
order of the changes.
"""

from __future__ import annotations

import json
from typing import Any, Final

from sqlalchemy import delete, func, insert, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.audit import merkle
from infra.audit.canonical import canonical
from infra.clock import now
from infra.db.models.audit import AuditLeaf, AuditNode, AuditStaged, AuditState, table

BATCH: Final = 2000


def lock_size(session: Session) -> int:
    """The tree's size, with its row locked for this transaction (created if missing)."""
    statement = select(AuditState.size).where(AuditState.id == 1).with_for_update()
    size = session.execute(statement).scalar_one_or_none()
    if size is None:
        try:
            with session.begin_nested():
                session.execute(insert(table(AuditState)).values(id=1, size=0))
        except IntegrityError:
            pass
        size = session.execute(statement).scalar_one()
    return int(size)


def tree_size(session: Session) -> int:
    """The tree's size (not locked)."""
    size = session.execute(select(AuditState.size).where(AuditState.id == 1)).scalar()
    return int(size or 0)


def load_nodes(session: Session, keys: set[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
    """The stored perfect-subtree hashes at ``keys``, in one statement."""
    if not keys:
        return {}
    rows = session.execute(select(AuditNode.level, AuditNode.idx, AuditNode.hash).where(
        tuple_(AuditNode.level, AuditNode.idx).in_(sorted(keys))))
    out = {(int(level), int(i)): bytes(h) for level, i, h in rows}
    missing = keys - out.keys()
    if missing:
        raise LookupError(f"tree nodes missing: {sorted(missing)[:5]}")
    return out


def integrate(session: Session, limit: int = BATCH) -> int:
    """Append up to ``limit`` committed staged leaves; returns how many. The caller commits."""
    size = lock_size(session)
    rows = session.execute(select(AuditStaged.id, AuditStaged.organization_id,
                                  AuditStaged.activity_id, AuditStaged.entry)
                           .order_by(AuditStaged.id).limit(limit)).all()
    if not rows:
        return 0
    activity_ids = {r.activity_id for r in rows if r.activity_id}
    previous: dict[str, int] = {}
    if activity_ids:
        previous = {str(a): int(i) for a, i in session.execute(
            select(AuditLeaf.activity_id, func.max(AuditLeaf.idx))
            .where(AuditLeaf.activity_id.in_(activity_ids)).group_by(AuditLeaf.activity_id))}
    nodes = load_nodes(session, set(merkle.right_edge(size)))
    leaves: list[dict[str, Any]] = []
    new_nodes: list[dict[str, Any]] = []
    at = now()
    for row in rows:
        entry = json.loads(row.entry)
        entry["index"] = size
        entry["prev"] = previous.get(row.activity_id) if row.activity_id else None
        data = canonical(entry)
        leaf = merkle.leaf_hash(data)
        for level, index, value in merkle.append_nodes(size, leaf, lambda lv, ix: nodes[lv, ix]):
            nodes[level, index] = value
            new_nodes.append({"level": level, "idx": index, "hash": value})
        leaves.append({"idx": size, "organization_id": row.organization_id,
                       "activity_id": row.activity_id, "data": data.decode(), "hash": leaf,
                       "created_at": at})
        if row.activity_id:
            previous[row.activity_id] = size
        size += 1
    session.execute(insert(table(AuditLeaf)), leaves)
    session.execute(insert(table(AuditNode)), new_nodes)
    session.execute(delete(table(AuditStaged)).where(
        AuditStaged.id.in_([r.id for r in rows])))
    session.execute(update(table(AuditState)).where(AuditState.id == 1).values(size=size))
    return len(rows)


def root_at(session: Session, size: int) -> bytes:
    """The root hash of the first ``size`` leaves, from the stored nodes."""
    nodes = load_nodes(session, set(merkle.right_edge(size)))
    return merkle.root(size, lambda level, index: nodes[level, index])
