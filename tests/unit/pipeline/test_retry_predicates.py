"""Which failures the broker retries: connectivity only; permanent errors become FAILED."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sqlalchemy import text
from sqlalchemy.exc import (
    DataError,
    DBAPIError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    ProgrammingError,
)

import consensus.actors
import infra.activities
import infra.pipeline.decide
import notifier.actors
import workers.actors
from infra.activities import Registry, registry
from infra.db.models.activities import Activity
from infra.pipeline import lifecycle
from infra.pipeline.execute import MAX_RETRIES, is_transient, retry_when, run_activity
from tests.unit.pipeline.conftest import Pipeline


def _db_error(cls: type[DBAPIError], invalidated: bool = False) -> DBAPIError:
    return cls("SELECT 1", {}, Exception("driver says no"), connection_invalidated=invalidated)


@pytest.mark.parametrize("error, transient", [
    (_db_error(OperationalError), True),            # connection lost, timeout, deadlock
    (_db_error(InterfaceError), True),              # driver-level connection problem
    (_db_error(DBAPIError, invalidated=True), True),  # any error that dropped the connection
    (_db_error(DataError), False),                  # e.g. NUL in a string on PostgreSQL
    (_db_error(IntegrityError), False),
    (_db_error(ProgrammingError), False),
    (_db_error(DBAPIError), False),
    (ValueError("bug"), False),
    (KeyError("bug"), False),
])
def test_only_connectivity_errors_are_transient(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient
    assert retry_when(0, error) is transient
    assert retry_when(MAX_RETRIES, error) is False   # bounded


def _actors(pipeline: Pipeline) -> dict[str, object]:
    found = {}
    for module in (consensus.actors, workers.actors):
        for actor in module.declare(pipeline.services):
            found[actor.actor_name] = actor
    for actor in notifier.actors.declare(pipeline.services):
        found[actor.actor_name] = actor
    return found


def test_every_actor_retries_only_transient_errors(pipeline: Pipeline) -> None:
    actors = _actors(pipeline)
    assert {"execute_vote_activity", "execute_signing_activity", "execute_account_activity",
            "evaluate_activity", "deliver_webhook"} <= set(actors)
    assert len(actors) >= 4
    for name, actor in actors.items():
        predicate = actor.options["retry_when"]  # type: ignore[attr-defined]
        assert predicate(0, _db_error(OperationalError)), name
        assert not predicate(0, _db_error(DataError)), name
        assert not predicate(0, _db_error(IntegrityError)), name
        assert not predicate(0, _db_error(ProgrammingError)), name
        assert not predicate(0, RuntimeError("bug")), name


def _raise_real_integrity_error(params: object, ctx: object) -> dict[str, object]:
    """A handler whose statement violates a constraint in the real database."""
    session = ctx.session  # type: ignore[attr-defined]
    session.execute(text("INSERT INTO organizations (id) VALUES (NULL)"))
    return {}


def _raise_operational_error(params: object, ctx: object) -> dict[str, object]:
    raise _db_error(OperationalError)


def _with_handler(monkeypatch: pytest.MonkeyPatch, type_name: str, handler: object) -> None:
    """The registry, with ``type_name``'s handler replaced by one that fails as given."""
    target = registry().by_type[type_name][0]
    specs = [replace(s, execute=handler) if s is target else s for s in registry().all()]
    monkeypatch.setattr(infra.activities, "_registry", Registry(specs))


def _status(pipeline: Pipeline, activity_id: str) -> tuple[str, dict | None]:
    with pipeline.services.session_factory() as session:
        activity = session.get(Activity, activity_id)
        assert activity is not None
        return activity.status, activity.failure


def test_a_permanent_database_error_fails_the_activity_once(pipeline: Pipeline,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    activity_id, _ = pipeline.submit_create_api_key()
    _with_handler(monkeypatch, "ACTIVITY_TYPE_CREATE_API_KEYS_V2", _raise_real_integrity_error)
    assert run_activity(pipeline.services, activity_id) == lifecycle.FAILED   # not raised
    status, failure = _status(pipeline, activity_id)
    assert status == lifecycle.FAILED
    assert failure is not None and failure["code"] == 13
    assert failure["message"] == "internal error while executing the activity"   # no SQL leaked
    assert run_activity(pipeline.services, activity_id) is None   # a redelivery does nothing


def test_a_transient_database_error_is_left_for_the_broker(pipeline: Pipeline,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    activity_id, _ = pipeline.submit_create_api_key()
    _with_handler(monkeypatch, "ACTIVITY_TYPE_CREATE_API_KEYS_V2", _raise_operational_error)
    with pytest.raises(OperationalError):
        run_activity(pipeline.services, activity_id)
    assert _status(pipeline, activity_id) == (lifecycle.PENDING, None)


def test_a_crash_while_deciding_fails_the_activity_instead_of_looping(
        pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> None:
    activity_id, _ = pipeline.submit_create_api_key()

    def broken_decide(session: object, activity: object, spec: object) -> object:
        raise _db_error(DataError)

    monkeypatch.setattr(infra.pipeline.decide, "decide", broken_decide)
    assert run_activity(pipeline.services, activity_id) == lifecycle.FAILED
    status, failure = _status(pipeline, activity_id)
    assert status == lifecycle.FAILED and failure is not None and failure["code"] == 13
    assert run_activity(pipeline.services, activity_id) is None


def _flush_violating_a_key(params: object, ctx: object) -> dict[str, object]:
    """A handler whose rows only collide when the result is flushed (issue 15, item 1)."""
    from infra.db.models.organizations import ApiKey

    ctx.session.add(ApiKey(organization_id="no-such-organization",  # type: ignore[attr-defined]
                           user_id=ctx.user_id, name="k", public_key="02" + "ab" * 32,  # type: ignore[attr-defined]
                           curve="API_KEY_CURVE_P256", credential_type="CREDENTIAL_TYPE_API_KEY_P256"))
    return {}   # nothing is written yet: the foreign key fails when the result is flushed


def test_a_constraint_violated_at_the_final_flush_is_recorded_failed(
        pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: the except branch read the expired activity on the failed session
    # (PendingRollbackError), nothing was recorded and the sweeper re-sent it for ever.
    activity_id, _ = pipeline.submit_create_api_key()
    _with_handler(monkeypatch, "ACTIVITY_TYPE_CREATE_API_KEYS_V2", _flush_violating_a_key)
    assert run_activity(pipeline.services, activity_id) == lifecycle.FAILED
    status, failure = _status(pipeline, activity_id)
    assert status == lifecycle.FAILED and failure is not None and failure["code"] == 13
    assert run_activity(pipeline.services, activity_id) is None


def test_an_intent_that_no_longer_validates_fails_instead_of_crashing(pipeline: Pipeline) -> None:
    activity_id, _ = pipeline.submit_create_api_key()
    # As if stored by an older version with looser rules (names had no length bound).
    with pipeline.services.session_factory() as session:
        activity = session.get(Activity, activity_id)
        assert activity is not None
        intent = dict(activity.intent)
        key_intent = dict(intent["createApiKeysIntentV2"])
        key_intent["apiKeys"] = [dict(key_intent["apiKeys"][0], apiKeyName="n" * 300)]
        activity.intent = {**intent, "createApiKeysIntentV2": key_intent}
        session.commit()
    assert run_activity(pipeline.services, activity_id) == lifecycle.FAILED
    status, failure = _status(pipeline, activity_id)
    assert status == lifecycle.FAILED and failure is not None and failure["code"] == 13
    assert run_activity(pipeline.services, activity_id) is None
