"""Which votes count: approvals expire 24 hours after the first one (PROTOCOL.md §3.4).

An activity waiting for consensus never expires itself; its approvals do. The window opens at
the first approval (the submission counts as the submitter's first approval); approvals that
arrive after it closed open a new window, and everything older is dropped. Rejections do not
expire.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

APPROVAL_WINDOW = timedelta(hours=24)
APPROVED = "VOTE_SELECTION_APPROVED"
REJECTED = "VOTE_SELECTION_REJECTED"


@dataclass(frozen=True)
class Ballot:
    """One recorded vote as far as counting is concerned."""

    user_id: str
    selection: str
    created_at: datetime


def live_approvals(
    ballots: Iterable[Ballot], now: datetime, window: timedelta = APPROVAL_WINDOW
) -> list[Ballot]:
    """The approvals still counting at ``now``, oldest first, one per user."""
    approvals = sorted((b for b in ballots if b.selection == APPROVED), key=lambda b: b.created_at)
    current: list[Ballot] = []
    for ballot in approvals:
        if current and ballot.created_at >= current[0].created_at + window:
            current = []
        current.append(ballot)
    if not current or now >= current[0].created_at + window:
        return []
    first: dict[str, Ballot] = {}
    for ballot in current:
        first.setdefault(ballot.user_id, ballot)
    return list(first.values())


def rejecters(ballots: Sequence[Ballot]) -> list[str]:
    """Users who rejected, in vote order, each once."""
    out: list[str] = []
    for ballot in sorted(ballots, key=lambda b: b.created_at):
        if ballot.selection == REJECTED and ballot.user_id not in out:
            out.append(ballot.user_id)
    return out
