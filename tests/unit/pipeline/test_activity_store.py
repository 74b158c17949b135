"""The activity store (``infra.pipeline.store``): listeners see an immutable change and answer
with effects, which the store writes itself, one way whatever a listener did.

On a migrated SQLite file (``tests.support.webhook_world``), through real units of work.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from infra.clock import new_id, now
from infra.db.activity_rows import ActivityRow, LeafRow, VoteRow
from infra.db.changes import Change, Effects, Insert
from infra.db.models.activities import Activity, Vote
from infra.db.models.audit import AuditStaged
from infra.db.models.organizations import OrganizationFeature
from infra.db.models.webhooks import WebhookDelivery
from infra.db.unit_of_work import ActivityListener, UnitOfWork
from infra.pipeline import lifecycle, store
from tests.support.webhook_world import World, running_world


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with running_world(tmp_path) as built:
        yield built


def _new(organization_id: str, body: str = '{"secret":"s3cr3t"}') -> tuple[ActivityRow, VoteRow]:
    moment = now()
    activity = ActivityRow(
        id=new_id(), organization_id=organization_id, type="ACTIVITY_TYPE_UPDATE_USER_NAME",
        status=lifecycle.PENDING, fingerprint="sha256:" + new_id(), body=body,
        timestamp_ms="1", intent={"updateUserNameIntent": {"userId": "u", "userName": "n"}},
        result={}, failure=None, user_id="u", version=1, created_at=moment, updated_at=moment)
    vote = VoteRow(id=new_id(), activity_id=activity.id, user_id="u",
                   selection="VOTE_SELECTION_APPROVED", message=body, public_key="02u",
                   signature="00", scheme="SIGNATURE_SCHEME_TK_API_P256",
                   created_at=moment, updated_at=moment)
    return activity, vote


def _uow(world: World, *listeners: ActivityListener) -> UnitOfWork:
    return UnitOfWork(world.services.session_factory, listeners=listeners)


def test_each_listener_sees_the_change_as_the_ones_before_left_it(world: World) -> None:
    seen: list[Change] = []

    def redact(uow: UnitOfWork, change: Change) -> Effects:
        after = change.after
        return Effects(activity=dataclasses.replace(after, body=after.body.replace("s3cr3t", "x")),
                       votes=tuple(dataclasses.replace(v, message="x") for v in change.votes or ()))

    def record(uow: UnitOfWork, change: Change) -> None:
        seen.append(change)

    activity, vote = _new(world.root_id)
    with _uow(world, redact, record) as uow:
        stored = store.accept(uow, activity, vote)
        uow.commit()
    assert seen[0].previous is None and seen[0].before is None
    assert "s3cr3t" not in seen[0].after.body and seen[0].votes is not None
    assert [v.message for v in seen[0].votes] == ["x"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        seen[0].after.body = "changed"  # type: ignore[misc]
    assert stored.body == seen[0].after.body
    with world.services.session_factory() as session:
        row = session.get(Activity, activity.id)
        votes = session.scalars(select(Vote.message).where(Vote.activity_id == activity.id)).all()
    assert row is not None and "s3cr3t" not in row.body
    assert list(votes) == ["x"]


def test_leaves_and_own_rows_a_listener_returns_are_written_with_the_change(
        world: World) -> None:
    activity, vote = _new(world.root_id)
    with _uow(world) as uow:
        store.accept(uow, activity, vote)
        uow.commit()
    endpoint_id = world.add_endpoint(world.root_id, "https://hooks.example/")

    def leaf_and_delivery(uow: UnitOfWork, change: Change) -> Effects:
        return Effects(
            leaves=(store_leaf(change),),
            inserts=(Insert(WebhookDelivery.__table__, {  # type: ignore[arg-type]
                "id": new_id(), "event_id": "e-" + change.after.status,
                "event_type": "ACTIVITY_UPDATES", "endpoint_id": endpoint_id,
                "organization_id": world.root_id, "subject_organization_id": world.root_id,
                "activity_id": change.after.id, "body": "{}", "status": "PENDING",
                "attempts": 0, "schedule_attempts": 0, "next_attempt_at": now()}),))

    answered: list[str] = []

    def hold(uow: UnitOfWork, change: Change) -> Effects:
        return Effects(on_answer=answered.append)

    with _uow(world, leaf_and_delivery, hold) as uow:
        claimed = store.claim_status(uow.session, activity.id, lifecycle.PENDING)
        assert claimed is not None
        settled = store.transition(uow, claimed, lifecycle.COMPLETED, result={"ok": {}},
                                   answer=lambda row: f"{row.id} rendered")
        uow.commit()
    assert settled.status == lifecycle.COMPLETED and settled.version == claimed.version + 1
    # A listener wrote a row of its own: the rendering would not show it, so none travels.
    assert answered == []
    with world.services.session_factory() as session:
        entries = session.scalars(select(AuditStaged.entry)
                                  .where(AuditStaged.activity_id == activity.id)).all()
        deliveries = session.scalars(select(WebhookDelivery.event_id)
                                     .where(WebhookDelivery.activity_id == activity.id)).all()
        row = session.get(Activity, activity.id)
    assert any('"marker":"' + lifecycle.COMPLETED in e for e in entries)
    assert list(deliveries) == ["e-" + lifecycle.COMPLETED]
    assert row is not None and row.status == lifecycle.COMPLETED and row.result == {"ok": {}}


def test_the_answer_goes_to_the_listeners_that_asked_when_nothing_else_is_written(
        world: World) -> None:
    activity, vote = _new(world.root_id)
    answered: list[str] = []

    def hold(uow: UnitOfWork, change: Change) -> Effects:
        return Effects(on_answer=answered.append)

    with _uow(world) as uow:
        store.accept(uow, activity, vote)
        uow.commit()
    with _uow(world, hold) as uow:
        claimed = store.claim_status(uow.session, activity.id, lifecycle.PENDING)
        assert claimed is not None
        store.transition(uow, claimed, lifecycle.COMPLETED, result={"ok": {}},
                         answer=lambda row: f"{row.id} {row.status}")
        uow.commit()
    assert answered == [f"{activity.id} {lifecycle.COMPLETED}"]


def test_one_write_path_whatever_a_listener_flushed(world: World) -> None:
    """A listener writing its own ORM rows (and flushing them) changes nothing of how the
    activity is written: the session never holds an activity or vote object."""
    def flushes(uow: UnitOfWork, change: Change) -> None:
        uow.session.add(OrganizationFeature(organization_id=world.root_id,
                                            name="FEATURE_NAME_" + change.after.status[16:],
                                            value="1"))
        uow.session.flush()

    activity, vote = _new(world.root_id)
    with _uow(world, flushes) as uow:
        store.accept(uow, activity, vote)
        claimed = store.claim_status(uow.session, activity.id, lifecycle.PENDING)
        assert claimed is not None
        store.transition(uow, claimed, lifecycle.FAILED, failure={"code": 13})
        held = [o for o in [*uow.session.identity_map.values(), *uow.session.new]
                if isinstance(o, Activity | Vote)]
        assert held == []
        uow.commit()
    with world.services.session_factory() as session:
        row = session.get(Activity, activity.id)
        assert row is not None and row.status == lifecycle.FAILED
        assert session.scalar(select(Vote.id).where(Vote.activity_id == activity.id)) == vote.id


def store_leaf(change: Change) -> LeafRow:
    """A leaf naming the change's new status (what the audit listener would stage)."""
    from infra.audit.leaves import leaf

    return leaf({"kind": "test", "activityId": change.after.id,
                 "organizationId": change.after.organization_id,
                 "marker": change.after.status})
