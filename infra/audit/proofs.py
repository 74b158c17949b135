"""Inclusion and consistency proofs from the stored tree (the nodes they need, one read per
tree level), and the wire shapes the queries and the public routes answer with."""

from __future__ import annotations

import base64
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.audit import checkpoints, merkle, sequencer
from infra.db.models.audit import AuditLeaf, AuditStaged
from infra.errors import InvalidRequest


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def _with_nodes(session: Session, compute: Any) -> Any:
    nodes = sequencer.load_nodes(session, merkle.nodes_needed(compute))
    return compute(lambda level, index: nodes[level, index])


def inclusion(session: Session, index: int, size: int) -> list[bytes]:
    """PATH(index, D[size]) from the stored nodes."""
    return list(_with_nodes(session, lambda node: merkle.inclusion_proof(index, size, node)))


def consistency(session: Session, size1: int, size2: int) -> list[bytes]:
    """PROOF(size1, D[size2]) from the stored nodes."""
    return list(_with_nodes(session, lambda node: merkle.consistency_proof(size1, size2, node)))


def parse_size(value: str | None, field: str) -> int | None:
    """A tree size sent as a decimal string (uint64 on the wire); ``None`` stays ``None``."""
    if value is None or value == "":
        return None
    if not value.isdigit() or len(value) > 19:
        raise InvalidRequest(f"{field} must be a tree size in decimal digits", field=field)
    return int(value)


def checkpoint_for(session: Session, size: int | None) -> checkpoints.Stored:
    """The checkpoint of ``size`` (the latest when ``None``)."""
    return checkpoints.latest(session) if size is None else checkpoints.at_size(session, size)


def activity_inclusion(session: Session, organization_id: str, activity_id: str,
                       size: int | None) -> dict[str, Any]:
    """Every leaf of an activity of ``organization_id`` in the checkpoint (``size`` or the
    latest), each with its inclusion proof, and the leaves still waiting to be appended."""
    checkpoint = checkpoint_for(session, size)
    rows = session.execute(select(AuditLeaf.idx, AuditLeaf.data, AuditLeaf.hash).where(
        AuditLeaf.activity_id == activity_id, AuditLeaf.organization_id == organization_id,
        AuditLeaf.idx < checkpoint.size).order_by(AuditLeaf.idx)).all()
    later = session.execute(select(AuditLeaf.data).where(
        AuditLeaf.activity_id == activity_id, AuditLeaf.organization_id == organization_id,
        AuditLeaf.idx >= checkpoint.size).order_by(AuditLeaf.idx)).scalars().all()
    staged = session.execute(select(AuditStaged.entry).where(
        AuditStaged.activity_id == activity_id,
        AuditStaged.organization_id == organization_id).order_by(AuditStaged.id)).scalars().all()
    leaves = [{"leafIndex": str(idx), "leafData": data, "leafHash": _b64(bytes(h)),
               "inclusionProof": [_b64(p) for p in inclusion(session, int(idx), checkpoint.size)]}
              for idx, data, h in rows]
    return {"checkpoint": checkpoint.to_wire(), "leaves": leaves,
            "pendingLeaves": [*later, *staged]}


def consistency_between(session: Session, first: int, second: int | None) -> dict[str, Any]:
    """The consistency proof from ``first`` to the checkpoint ``second`` (latest: ``None``)."""
    checkpoint = checkpoint_for(session, second)
    if not 0 < first <= checkpoint.size:
        raise InvalidRequest(f"firstTreeSize must be between 1 and {checkpoint.size}",
                             field="firstTreeSize")
    return {"checkpoint": checkpoint.to_wire(), "firstTreeSize": str(first),
            "consistencyProof": [_b64(p) for p in consistency(session, first, checkpoint.size)]}
