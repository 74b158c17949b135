"""A redelivered message never repeats an effect: decide+execute twice, and after COMPLETED."""

from __future__ import annotations

from sqlalchemy import func, select

from consensus.actors import hand_to_pool
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
    # One message, to the activity's own pool: nothing goes through consensus any more.
    assert _queued(pipeline, queues.ACCOUNTS) == 1
    assert _queued(pipeline, queues.CONSENSUS) == 0

    # Delivered twice: decided, recorded and executed once.
    assert run_activity(pipeline.services, activity_id) == lifecycle.COMPLETED
    completed = _activity(pipeline, activity_id)
    assert run_activity(pipeline.services, activity_id) is None
    assert _keys_with(pipeline, public_key) == 1
    assert _evaluations(pipeline, activity_id) == 1

    # Late redeliveries after COMPLETED (an old evaluate_activity too) change nothing and
    # send nothing.
    assert hand_to_pool(pipeline.services, activity_id) is None
    assert run_activity(pipeline.services, activity_id) is None
    after = _activity(pipeline, activity_id)
    assert (after.status, after.version, after.result) == (lifecycle.COMPLETED, completed.version,
                                                            completed.result)
    assert _queued(pipeline, queues.ACCOUNTS) == 1
    assert _evaluations(pipeline, activity_id) == 1
    assert _keys_with(pipeline, public_key) == 1


def test_an_old_evaluate_message_hands_a_pending_activity_to_its_pool(pipeline: Pipeline) -> None:
    activity_id, _ = pipeline.submit_create_api_key()
    assert hand_to_pool(pipeline.services, activity_id) == queues.ACCOUNTS
    assert _queued(pipeline, queues.ACCOUNTS) == 2
    assert _evaluations(pipeline, activity_id) == 0   # handing on decides nothing


def test_repeated_executes_run_the_handler_once(pipeline: Pipeline) -> None:
    activity_id, public_key = pipeline.submit_create_api_key()
    results = [run_activity(pipeline.services, activity_id) for _ in range(3)]
    assert results == [lifecycle.COMPLETED, None, None]
    assert _keys_with(pipeline, public_key) == 1
