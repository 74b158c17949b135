"""A redelivered message never repeats an effect: evaluate and execute, twice and after COMPLETED."""

from __future__ import annotations

from sqlalchemy import func, select

from consensus.actors import HANDED_OFF, evaluate_activity
from infra.db.models.activities import Activity
from infra.db.models.organizations import ApiKey
from infra.db.models.policies import PolicyEvaluation
from infra.messaging import queues
from infra.pipeline import lifecycle
from infra.pipeline.execute import run_activity
from tests.unit.pipeline.conftest import Pipeline


def _queued(pipeline: Pipeline, queue: str) -> int:
    return int(pipeline.services.broker.queues[queue].qsize())


def _keys_with(pipeline: Pipeline, public_key: str) -> int:
    with pipeline.services.session_factory() as session:
        return int(session.scalar(select(func.count()).select_from(ApiKey)
                                  .where(ApiKey.public_key == public_key)) or 0)


def _evaluations(pipeline: Pipeline, activity_id: str) -> int:
    with pipeline.services.session_factory() as session:
        return int(session.scalar(select(func.count()).select_from(PolicyEvaluation)
                                  .where(PolicyEvaluation.activity_id == activity_id)) or 0)


def _activity(pipeline: Pipeline, activity_id: str) -> Activity:
    with pipeline.services.session_factory() as session:
        activity = session.get(Activity, activity_id)
        assert activity is not None
        return activity


def test_duplicate_deliveries_have_exactly_one_effect(pipeline: Pipeline) -> None:
    activity_id, public_key = pipeline.submit_create_api_key()
    assert _queued(pipeline, queues.CONSENSUS) == 1

    # evaluate_activity delivered twice: decided and recorded once; the redelivery only
    # re-sends the execute (how the sweeper recovers a lost one), which is status-guarded.
    assert evaluate_activity(pipeline.services, activity_id) == "allow"
    assert evaluate_activity(pipeline.services, activity_id) == HANDED_OFF
    assert _evaluations(pipeline, activity_id) == 1
    assert _queued(pipeline, queues.ACCOUNTS) == 2

    # run_activity delivered twice: one API key, COMPLETED once.
    assert run_activity(pipeline.services, activity_id) == lifecycle.COMPLETED
    completed = _activity(pipeline, activity_id)
    assert run_activity(pipeline.services, activity_id) is None
    assert _keys_with(pipeline, public_key) == 1

    # Late redeliveries after COMPLETED change nothing and send nothing.
    assert evaluate_activity(pipeline.services, activity_id) is None
    assert run_activity(pipeline.services, activity_id) is None
    after = _activity(pipeline, activity_id)
    assert (after.status, after.version, after.result) == (lifecycle.COMPLETED, completed.version,
                                                            completed.result)
    assert _queued(pipeline, queues.ACCOUNTS) == 2
    assert _evaluations(pipeline, activity_id) == 1
    assert _keys_with(pipeline, public_key) == 1


def test_repeated_executes_run_the_handler_once(pipeline: Pipeline) -> None:
    activity_id, public_key = pipeline.submit_create_api_key()
    evaluate_activity(pipeline.services, activity_id)
    results = [run_activity(pipeline.services, activity_id) for _ in range(3)]
    assert results == [lifecycle.COMPLETED, None, None]
    assert _keys_with(pipeline, public_key) == 1
