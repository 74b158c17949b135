"""What an activity listener receives (a :class:`Change`) and what it answers (:class:`Effects`).

The activity store (``infra.pipeline.store``) tells the process's listeners (wired in order in
``infra.bootstrap``) of every creation and status change, inside the transaction of the change
and before it writes it. A listener sees the activity before and after, and answers with what
the store must write with the change: the activity and its new votes as they must rest (a
redaction), the audit-log leaf, rows of its own tables (webhook deliveries), and whom to hand
the settled activity's rendering. The next listener sees the change as the previous ones left
it; nothing a listener does reaches a row of the store's tables except through these effects.
Whatever must wait for the commit still goes to ``uow.after_commit``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Table

from infra.db.activity_rows import ActivityRow, EvaluationRow, LeafRow, VoteRow


@dataclass(frozen=True, slots=True)
class Change:
    """One activity creation (``before`` is ``None``) or status change.

    ``votes``: the activity's votes as the writer holds them (on creation, the submitter's
    vote written with it; ``None``: not read). ``evaluation``: the policy engine's verdict
    stored with the change, if one decided it. ``leaves``: the audit-log leaves the listeners
    before this one returned for it.
    """

    before: ActivityRow | None
    after: ActivityRow
    votes: tuple[VoteRow, ...] | None = None
    evaluation: EvaluationRow | None = None
    leaves: tuple[LeafRow, ...] = ()

    @property
    def previous(self) -> str | None:
        """The status before the change (``None``: the activity is new)."""
        return self.before.status if self.before is not None else None

    def with_effects(self, effects: Effects) -> Change:
        """The change as ``effects`` leave it (for the next listener)."""
        if effects.activity is None and effects.votes is None and not effects.leaves:
            return self
        return replace(self, after=effects.activity or self.after,
                       votes=effects.votes if effects.votes is not None else self.votes,
                       leaves=(*self.leaves, *effects.leaves))


@dataclass(frozen=True, slots=True)
class Insert:
    """A row of a listener's own table, inserted after the change (its foreign keys hold)."""

    table: Table
    values: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Effects:
    """What a listener asks the store to write with the change.

    ``activity``: the activity as it must be stored (a redacted body or intent). ``votes``:
    the change's new votes as they must be stored (a redacted message). ``leaves``: audit-log
    leaves of the change. ``inserts``: rows of the listener's own tables. ``on_answer``:
    called with the settled activity's rendering when one travels with the change
    (``infra.pipeline.lifecycle.ANSWER_CHANNEL``), before the commit.
    """

    activity: ActivityRow | None = None
    votes: tuple[VoteRow, ...] | None = None
    leaves: tuple[LeafRow, ...] = ()
    inserts: tuple[Insert, ...] = ()
    on_answer: Callable[[str], None] | None = None

