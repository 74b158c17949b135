"""``walletd audit verify``: recompute the log and name the first discrepancy.

Against a database (:func:`verify_database`): every leaf in index order (dense, each
committing to its own index, canonical, its stored hash, its activity's ``prev`` chain), the
tree recomputed from them, every stored checkpoint's signature and root, consistency with
the checkpoint verified last time (the *state*: a file the verifier keeps), and every
activity row against its newest leaf (status, version, fingerprint, type, organization,
intent/result/failure digests), both ways: a leaf whose activity is gone, an activity
without a leaf.

Against a running deployment (:func:`verify_remote`): the published checkpoint and its
consistency with the state, then, for one organization's credentials, every activity's
leaves with their inclusion proofs against that checkpoint and its newest leaf against the
activity as the API renders it.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from infra.audit import merkle, note
from infra.audit.canonical import canonical, digest
from infra.audit.leaves import ACTIVITY, ROW_KINDS
from infra.audit.log_key import origin_of
from infra.clock import as_utc
from infra.db.models.activities import Activity
from infra.db.models.audit import AuditCheckpoint, AuditLeaf, AuditStaged
from infra.db.models.wallets import ServiceKey

#: Fields of an activity leaf compared with the activity row.
_ROW_FIELDS = ("organizationId", "fingerprint", "type", "status", "version", "intentDigest",
               "resultDigest", "failureDigest")


class Discrepancy(Exception):
    """What verification found; ``str()`` names the first problem."""

    def __init__(self, findings: list[str]) -> None:
        super().__init__(findings[0])
        self.findings = findings


@dataclass
class State:
    """What a verifier or witness keeps between runs: the pinned key, the last checkpoint."""

    verifier_key: str = ""
    size: int = 0
    root: str = ""
    note: str = ""

    @classmethod
    def load(cls, path: Path | None) -> State:
        if path is None or not path.exists():
            return cls()
        data = json.loads(path.read_text())
        return cls(data.get("verifierKey", ""), int(data.get("treeSize", 0)),
                   data.get("rootHash", ""), data.get("note", ""))

    def save(self, path: Path | None) -> None:
        if path is None:
            return
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps({"verifierKey": self.verifier_key, "treeSize": self.size,
                                   "rootHash": self.root, "note": self.note}, indent=1))
        tmp.replace(path)


@dataclass
class Report:
    """A verification that found nothing wrong."""

    tree_size: int
    checkpoint: note.Checkpoint | None
    activities: int
    leaves_by_kind: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def pin(state: State, published: note.Verifier, pinned: str | None) -> note.Verifier:
    """The key to verify with: ``pinned`` (given), else the state's, else the published one
    (pinned from now on). A published key that differs from the pinned one is a finding."""
    expected = pinned or state.verifier_key
    if expected:
        verifier = note.Verifier.parse(expected)
        if str(verifier) != str(published):
            raise Discrepancy([f"the log key changed: {published} is published, "
                               f"{verifier} was pinned"])
        return verifier
    state.verifier_key = str(published)
    return published


def check_extension(state: State, checkpoint: note.Checkpoint,
                    proof_of: Callable[[int], list[bytes]]) -> None:
    """Raise unless ``checkpoint`` is a consistent extension of the state's checkpoint."""
    if not state.size:
        return
    old_root = base64.b64decode(state.root)
    if checkpoint.size < state.size:
        raise Discrepancy([f"rollback: the log's checkpoint has {checkpoint.size} leaves but a "
                           f"checkpoint of {state.size} leaves was verified before"])
    if checkpoint.size == state.size:
        if checkpoint.root != old_root:
            raise Discrepancy([f"fork: two different checkpoints of size {state.size}"])
        return
    try:
        merkle.verify_consistency(state.size, checkpoint.size, old_root, checkpoint.root,
                                  proof_of(state.size))
    except merkle.ProofError as err:
        raise Discrepancy([f"the checkpoint of size {checkpoint.size} is not an extension of "
                           f"the checkpoint of size {state.size} verified before: {err}"]) from err


def _published_verifier(session: Session) -> note.Verifier | None:
    row = session.execute(select(ServiceKey.public_key).where(
        ServiceKey.name == "audit-log.v1")).scalar_one_or_none()
    if not row:
        return None
    public = bytes.fromhex(row)
    return note.Verifier(origin_of(public), note.key_hash(origin_of(public), public), public)


def order_findings(index: int, leaf: dict[str, Any],
                   before: tuple[int, dict[str, Any]] | None) -> list[str]:
    """A status-change leaf must continue its activity's previous one: the status it left is
    the status the previous change recorded (none for the first), and its version is higher."""
    left = before[1].get("status") if before else None
    if leaf.get("previousStatus") != left or (
            before and int(leaf.get("version") or 0) <= int(before[1].get("version") or 0)):
        where = f"leaf {before[0]}" if before else "no earlier leaf"
        return [f"leaf {index} of activity {leaf.get('activityId')} moves from "
                f"{leaf.get('previousStatus')} but follows {where} ({left}): its history was "
                "reordered"]
    return []


def _parse_time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def _row_findings(activity: Activity, leaf: dict[str, Any], where: str) -> Iterable[str]:
    row = {"organizationId": activity.organization_id, "fingerprint": activity.fingerprint,
           "type": activity.type, "status": activity.status, "version": activity.version,
           "intentDigest": digest(activity.intent or None),
           "resultDigest": digest(activity.result or None),
           "failureDigest": digest(activity.failure or None)}
    for name in _ROW_FIELDS:
        if row[name] != leaf.get(name):
            what = {"resultDigest": "result", "intentDigest": "intent",
                    "failureDigest": "failure"}.get(name, name)
            yield (f"activity {activity.id}: its stored {what} differs from {where} "
                   f"({name} {leaf.get(name)!r}, the row gives {row[name]!r}): edited")


def verify_database(session: Session, *, state: State, pinned: str | None = None,
                    limit: int = 20) -> Report:
    """Verify the log stored in ``session``'s database; raises :class:`Discrepancy`."""
    findings: list[str] = []
    published = _published_verifier(session)
    if published is None:
        raise Discrepancy(["the database holds no audit log key"])
    verifier = pin(state, published, pinned)
    tree = merkle.MemoryTree()
    previous: dict[str, int] = {}
    newest: dict[str, tuple[int, dict[str, Any]]] = {}  # the newest leaf stating the row
    changes: dict[str, tuple[int, dict[str, Any]]] = {}  # the newest status change
    kinds: dict[str, int] = {}
    first_time = None
    rows = session.execute(select(AuditLeaf.idx, AuditLeaf.activity_id, AuditLeaf.data,
                                  AuditLeaf.hash, AuditLeaf.created_at)
                           .order_by(AuditLeaf.idx)).yield_per(2000)
    for expected, row in enumerate(rows):
        if row.idx != expected:
            findings.append(f"leaf {expected} is missing (the next stored leaf is {row.idx})")
            break
        data = row.data.encode()
        try:
            leaf = json.loads(data)
        except ValueError:
            findings.append(f"leaf {row.idx} is not JSON")
            break
        if leaf.get("index") != row.idx:
            findings.append(f"leaf {row.idx} records index {leaf.get('index')}: leaves were "
                            "reordered or replaced")
        if canonical(leaf) != data:
            findings.append(f"leaf {row.idx} is not in canonical form: edited")
        if merkle.leaf_hash(data) != bytes(row.hash):
            findings.append(f"leaf {row.idx}'s stored hash is not the hash of its data: edited")
        activity_id = leaf.get("activityId")
        if activity_id and activity_id != row.activity_id:
            findings.append(f"leaf {row.idx} describes activity {activity_id} but is filed "
                            f"under {row.activity_id}")
        if activity_id and leaf.get("prev") != previous.get(activity_id):
            findings.append(
                f"leaf {row.idx} says the previous leaf of activity {activity_id} is "
                f"{leaf.get('prev')}, but it is {previous.get(activity_id)}: a leaf was "
                "removed, inserted or reordered")
        if activity_id:
            previous[activity_id] = row.idx
            if leaf.get("kind") == ACTIVITY:
                findings.extend(order_findings(row.idx, leaf, changes.get(activity_id)))
                changes[activity_id] = (row.idx, leaf)
            if leaf.get("kind") in ROW_KINDS:
                newest[activity_id] = (row.idx, leaf)
        kinds[leaf.get("kind", "?")] = kinds.get(leaf.get("kind", "?"), 0) + 1
        if first_time is None:
            first_time = _parse_time(leaf.get("time"))
        tree.append(merkle.leaf_hash(data))
        if len(findings) >= limit:
            break
    if findings:
        raise Discrepancy(findings)

    latest: note.Checkpoint | None = None
    for size, root, signed in session.execute(select(
            AuditCheckpoint.size, AuditCheckpoint.root, AuditCheckpoint.note)
            .order_by(AuditCheckpoint.size)):
        try:
            checkpoint = note.open_checkpoint(signed, verifier)
        except note.NoteError as err:
            findings.append(f"checkpoint of size {size}: {err}")
            continue
        if checkpoint.size != size or checkpoint.root != bytes(root):
            findings.append(f"checkpoint of size {size}: its stored size/root differ from "
                            "what its note signs")
        if checkpoint.size > tree.size:
            findings.append(f"checkpoint of size {checkpoint.size} is signed but only "
                            f"{tree.size} leaves are stored: leaves were deleted")
        elif tree.root(checkpoint.size) != checkpoint.root:
            findings.append(f"checkpoint of size {checkpoint.size}: the stored leaves do not "
                            "hash to its signed root: leaves were edited")
        latest = checkpoint
    if findings:
        raise Discrepancy(findings)
    if state.size:
        if tree.size < state.size or latest is None or latest.size < state.size:
            raise Discrepancy([
                f"rollback: the database has {tree.size} leaves and a newest checkpoint of "
                f"size {latest.size if latest else 0}, but a checkpoint of {state.size} "
                "leaves was verified before (restored from an older dump?)"])
        if tree.root(state.size) != base64.b64decode(state.root):
            raise Discrepancy([f"the first {state.size} leaves differ from the checkpoint "
                               "verified before: history was rewritten"])

    staged: dict[str, dict[str, Any]] = {}
    for activity_id, entry in session.execute(select(AuditStaged.activity_id, AuditStaged.entry)
                                              .order_by(AuditStaged.id)):
        leaf = json.loads(entry)
        if activity_id and leaf.get("kind") in ROW_KINDS:
            staged[activity_id] = leaf
    seen: set[str] = set()
    count = 0
    for activity in session.execute(select(Activity)).scalars().yield_per(1000):
        count += 1
        seen.add(activity.id)
        if activity.id in staged:
            found: Iterable[str] = _row_findings(activity, staged[activity.id],
                                                 "its newest (staged) leaf")
        elif activity.id in newest:
            index, leaf = newest[activity.id]
            found = _row_findings(activity, leaf, f"its newest leaf {index}")
        elif first_time is not None and as_utc(activity.created_at) >= first_time:
            found = [f"activity {activity.id} has no leaf: inserted without being recorded"]
        else:
            found = []  # created before the log existed
        findings.extend(found)
        if len(findings) >= limit:
            break
    for activity_id, (index, _leaf) in newest.items():
        if activity_id not in seen and len(findings) < limit:
            findings.append(f"activity {activity_id} (newest leaf {index}) is missing from the "
                            "database: deleted")
    if findings:
        raise Discrepancy(findings)
    if latest is not None:
        state.size, state.root, state.note = (latest.size, base64.b64encode(latest.root).decode(),
                                              "")
    notes = []
    pre_log = session.execute(select(func.count()).select_from(Activity).where(
        Activity.created_at < first_time)).scalar() if first_time is not None else 0
    if pre_log:
        notes.append(f"{pre_log} activities predate the log and are not covered")
    return Report(tree.size, latest, count, kinds, notes)
