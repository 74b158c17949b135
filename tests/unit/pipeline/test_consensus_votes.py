"""Approvals expire 24 hours after the first; rejections stay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from infra.db.activity_rows import APPROVED, REJECTED
from infra.pipeline.votes import CountedVote, live_approvals, rejecters

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
H = timedelta(hours=1)


def approve(user: str, at: datetime) -> CountedVote:
    return CountedVote(user, APPROVED, at)


def test_approvals_count_inside_the_window() -> None:
    ballots = [approve("a", T0), approve("b", T0 + 5 * H)]
    assert [b.user_id for b in live_approvals(ballots, T0 + 23 * H)] == ["a", "b"]


def test_all_approvals_expire_24_hours_after_the_first() -> None:
    ballots = [approve("a", T0), approve("b", T0 + 23 * H)]
    assert live_approvals(ballots, T0 + 24 * H) == []


def test_an_approval_after_expiry_opens_a_new_window() -> None:
    ballots = [approve("a", T0), approve("b", T0 + 30 * H), approve("c", T0 + 31 * H)]
    assert [b.user_id for b in live_approvals(ballots, T0 + 32 * H)] == ["b", "c"]


def test_a_user_counts_once() -> None:
    ballots = [approve("a", T0), approve("a", T0 + H)]
    assert [b.created_at for b in live_approvals(ballots, T0 + 2 * H)] == [T0]


def test_rejections_are_not_approvals_and_do_not_expire() -> None:
    ballots = [approve("a", T0), CountedVote("b", REJECTED, T0 + H), CountedVote("b", REJECTED, T0 + 2 * H)]
    assert [b.user_id for b in live_approvals(ballots, T0 + 2 * H)] == ["a"]
    assert rejecters(ballots) == ["b"]
