"""Accepting an activity: authenticate, validate, store once, hand off, wait briefly.

This is the whole of what the ingress does for ``POST /public/v1/submit/<path>``; the
ingress resource only moves bytes in and out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from infra.activities import lifecycle, registry
from infra.activities.spec import ActivitySpec, CheckContext, Version
from infra.auth.principal import Principal, authenticate
from infra.bootstrap import Services
from infra.clock import now
from infra.db.models.activities import Activity, Vote
from infra.envelope import (
    Envelope,
    check_fresh,
    fingerprint,
    parse_envelope,
    parse_json_object,
    validate_model,
)
from infra.errors import InvalidRequest, NotFound, PermissionDenied, from_failure
from infra.messaging.contracts import send_evaluate_activity
from infra.views.activities import render_activity
from infra.wiremodel import WireModel

APPROVED = "VOTE_SELECTION_APPROVED"
REJECTED = "VOTE_SELECTION_REJECTED"


def spec_for_path(path: str) -> ActivitySpec:
    """The registry entry for ``/public/v1/submit/<path>``."""
    spec = registry().by_path.get(path)
    if spec is None:
        raise NotFound(f"unknown activity endpoint /public/v1/submit/{path}")
    return spec


def find_spec(path: str, type_name: str) -> tuple[ActivitySpec, Version]:
    """The registry entry for ``path`` and the submitted ``type``."""
    spec = spec_for_path(path)
    version = spec.version_for(type_name)
    if version is None:
        accepted = ", ".join(v.type for v in spec.versions)
        raise InvalidRequest(
            f"activity type {type_name!r} is not accepted by /public/v1/submit/{path}; "
            f"send one of: {accepted}", field="type")
    return spec, version


def submit(services: Services, path: str, headers: Mapping[str, str], body: bytes) -> dict[str, Any]:
    """Accept one activity and answer with its wire view.

    Raises:
        WalletError: Any 4xx condition, or the activity's own failure when it FAILED
            inside the wait (so clients see the error as Turnkey reports it).
    """
    spec_for_path(path)
    envelope = parse_envelope(parse_json_object(body))
    spec, version = find_spec(path, envelope.type)
    fp = fingerprint(body)
    moment = now()
    with services.uow() as uow:
        session = uow.session
        principal = authenticate(session, headers, body, envelope.organization_id, moment)
        existing = session.scalar(
            select(Activity).where(Activity.organization_id == envelope.organization_id,
                                   Activity.fingerprint == fp))
        if existing is not None:
            activity_id = existing.id
        else:
            check_fresh(envelope.timestamp_ms, moment)
            params: WireModel = validate_model(version.params, envelope.parameters, "parameters")
            if principal.organization_id != envelope.organization_id and not spec.parent_may_submit:
                raise PermissionDenied(
                    "a parent organization may read a sub-organization but not act in it; "
                    "stamp with a credential of the sub-organization")
            if spec.check is not None:
                spec.check(params, CheckContext(session, envelope.organization_id,
                                                principal.user_id, moment))
            activity = _store(uow.session, envelope, version, params.wire(), body, fp, principal)
            try:
                session.flush()
            except IntegrityError:
                # The same body raced in twice; the other one won.
                uow.rollback()
                activity_id = _by_fingerprint(services, envelope.organization_id, fp)
            else:
                activity_id = activity.id
                uow.after_commit(lambda: send_evaluate_activity(services.broker, activity_id))
                uow.commit()
    return answer(services, activity_id, principal.user_id)


def answer(services: Services, activity_id: str, viewer: str | None) -> dict[str, Any]:
    """Wait (bounded) for the activity to settle, then render it or raise its failure."""
    services.waiter.wait(activity_id, services.settings.sync_wait_ms / 1000)
    with services.uow() as uow:
        activity = uow.session.get(Activity, activity_id)
        assert activity is not None
        if activity.status == lifecycle.FAILED and activity.failure:
            raise from_failure(activity.failure)
        return render_activity(uow.session, activity, viewer)


def _store(session: Any, envelope: Envelope, version: Version, params: dict[str, Any],
           body: bytes, fp: str, principal: Principal) -> Activity:
    activity = Activity(
        organization_id=envelope.organization_id,
        type=envelope.type,
        status=lifecycle.PENDING,
        fingerprint=fp,
        body=body.decode("utf-8"),
        timestamp_ms=envelope.timestamp_ms,
        intent={version.intent_key: params},
        result={},
        user_id=principal.user_id,
    )
    session.add(activity)
    session.flush()
    session.add(record_vote(activity.id, principal, body, APPROVED))
    lifecycle.record_created(session, activity)
    return activity


def record_vote(activity_id: str, principal: Principal, body: bytes, selection: str) -> Vote:
    """A vote row carrying the stamp that proves it."""
    return Vote(
        activity_id=activity_id,
        user_id=principal.user_id,
        selection=selection,
        message=body.decode("utf-8"),
        public_key=principal.public_key,
        signature=principal.signature,
        scheme=principal.scheme,
    )


def _by_fingerprint(services: Services, organization_id: str, fp: str) -> str:
    with services.uow() as uow:
        found = uow.session.scalar(
            select(Activity.id).where(Activity.organization_id == organization_id,
                                      Activity.fingerprint == fp))
    if found is None:
        raise NotFound("activity not found")
    return found
