"""Accepting an activity: authenticate, validate, store once, hand off, wait briefly.

This is the whole of what the ingress does for ``POST /public/v1/submit/<path>``; the
ingress resource only moves bytes in and out.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pydantic import ValidationError
from sqlalchemy.exc import IntegrityError

from infra.access.guard import Submission, authorize
from infra.activities import registry
from infra.activities.spec import ActivitySpec, CheckContext, Version
from infra.auth.principal import Principal, authenticate
from infra.clock import new_id, now
from infra.db.activity_rows import APPROVED, ActivityRow, VoteRow
from infra.db.unit_of_work import UnitOfWork
from infra.errors import (
    AlreadyExists,
    InvalidRequest,
    NotFound,
    PermissionDenied,
    WalletError,
    from_failure,
)
from infra.identity.ancestry import organization_chain
from infra.messaging.actor_messages import send_execute_activity
from infra.pipeline import lifecycle, store
from infra.pipeline.wait import Watch
from infra.services import Services
from infra.submit_body import (
    SubmitBody,
    check_fresh,
    fingerprint,
    invalid_request,
    parse_envelope,
    parse_json_object,
    validate_model,
)
from infra.views.activities import load_and_render
from infra.wiremodel import WireModel


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

    An identical body (same fingerprint in the same organization) from the same user
    returns the stored activity; from another user it is a 409, never a silent merge.

    Raises:
        WalletError: Any 4xx condition, or the activity's own failure when it FAILED
            inside the wait (so clients see the error as Turnkey reports it).
    """
    return submit_answer(services, path, headers, body).view()


def submit_json(services: Services, path: str, headers: Mapping[str, str], body: bytes,
                parsed: dict[str, Any] | None = None) -> str:
    """:func:`submit`'s answer as the response body, ``{"activity": …}``: a rendering that
    travelled with the activity's announcement goes out as the text it came as."""
    return submit_answer(services, path, headers, body, parsed).response()


def submit_answer(services: Services, path: str, headers: Mapping[str, str], body: bytes,
                  parsed: dict[str, Any] | None = None) -> Answer:
    """:func:`submit`, answering with an :class:`Answer`. ``parsed``: ``body`` already
    parsed as a JSON object (``infra.safejson``) by whoever read it first."""
    spec_for_path(path)
    envelope = parse_envelope(parsed if parsed is not None else parse_json_object(body))
    spec, version = find_spec(path, envelope.type)
    with services.waiter.watch() as watch:
        activity_id, principal = _accept(services, spec, version, envelope, headers, body, watch)
        return answer(services, activity_id, principal.user_id, watch)


class Answer:
    """An activity's wire view, held as a dict or as the JSON text it arrived as."""

    __slots__ = ("_text", "_view")

    def __init__(self, view: dict[str, Any] | None = None, text: str | None = None) -> None:
        assert (view is None) != (text is None)
        self._view = view
        self._text = text

    def view(self) -> dict[str, Any]:
        """The view as a dict."""
        if self._view is None:
            assert self._text is not None
            self._view = json.loads(self._text)
        return self._view

    def response(self) -> str:
        """The response body ``{"activity": <view>}``."""
        if self._text is not None:
            return '{"activity":' + self._text + "}"
        return json.dumps({"activity": self._view})


def _accept(services: Services, spec: ActivitySpec, version: Version, envelope: SubmitBody,
            headers: Mapping[str, str], body: bytes, watch: Watch) -> tuple[str, Principal]:
    """Authenticate and store the activity once; return its id and who sent it.

    A newly stored activity is followed by ``watch`` before its work is handed off, so
    the wait for it needs no first status read.
    """
    fp = fingerprint(body)
    moment = now()
    with services.uow() as uow:
        session = uow.session
        login = bool(spec.extra.get("login"))
        principal = authenticate(session, headers, body, envelope.organization_id, moment,
                                 stamps=services.stamps, resolve_sub_organizations=login)
        # Authorization (docs/ACCESS.md): of the route's activity, as the envelope says.
        authorize(session, principal,
                  Submission(envelope.type, envelope.parameters, spec.resource_action))
        if login and principal.organization_id != envelope.organization_id and \
                envelope.organization_id in organization_chain(session, principal.organization_id):
            # A login addressed to a parent lands in the user's sub-organization (PROTOCOL.md §6).
            envelope = replace(envelope, organization_id=principal.organization_id)
        # Tenancy before anything about the body: a parent acting in a sub-organization is
        # a 403 whatever it sent.
        if principal.organization_id != envelope.organization_id and not spec.parent_may_submit:
            raise PermissionDenied(
                "a parent organization may read a sub-organization but not act in it; "
                "stamp with a credential of the sub-organization")
        try:
            check_fresh(envelope.timestamp_ms, moment)
            params: WireModel = validate_model(version.params, envelope.parameters, "parameters")
            if spec.check is not None:
                try:
                    spec.check(params, CheckContext(session, envelope.organization_id,
                                                    principal.user_id, moment))
                except ValidationError as ex:
                    # A model a check builds from the parameters refused them: a 400 too.
                    raise invalid_request(ex, "parameters") from ex
        except WalletError:
            # A body stored earlier answers with its activity even if it would no longer
            # be accepted (too old by now, or a resource it named is gone). New bodies,
            # the common case, are looked up only when their insert collides below.
            existing = store.find(session, envelope.organization_id, fp)
            if existing is not None:
                return _same_submitter(existing, principal), principal
            raise
        try:
            activity_id = _store(uow, envelope, version, params.wire(), body, fp, principal).id
        except IntegrityError:
            # The same body raced in concurrently and the other request stored it first.
            uow.rollback()
            raced = store.find(session, envelope.organization_id, fp)
            if raced is None:
                raise
            return _same_submitter(raced, principal), principal
        watch.follow(activity_id)
        uow.after_commit(lambda: send_execute_activity(services.broker, activity_id, spec.pool))
        uow.commit()
    return activity_id, principal


def _same_submitter(activity: ActivityRow, principal: Principal) -> str:
    """The stored activity's id if ``principal``'s user submitted it; a 409 otherwise."""
    if activity.user_id != principal.user_id:
        raise AlreadyExists(
            "another user already submitted an identical request body (same fingerprint); "
            "change timestampMs and submit again")
    return activity.id


def answer(services: Services, activity_id: str, viewer: str | None,
           watch: Watch | None = None) -> Answer:
    """Wait (bounded) for the activity to settle, then render it or raise its failure.

    ``watch``, when it already follows ``activity_id`` from before its hand-off, spares
    the first status read. A signature's rendering travels with the announcement that it
    settled (``lifecycle.ANSWER_CHANNEL``: only COMPLETED activities that are not votes), so
    no read follows and its text is the answer; otherwise the settled activity is read once,
    with its votes and voters (:func:`infra.views.activities.load_and_render`). A completed
    vote (approve/reject) answers with the activity it voted on, once that settles too, so
    a co-signer gets the target's result directly (PROTOCOL.md §4.2).
    """
    deadline = time.monotonic() + services.settings.sync_wait_ms / 1000
    if watch is not None and watch.activity_id == activity_id:
        watch.wait(max(0.0, deadline - time.monotonic()), known_unsettled=True)
    else:
        services.waiter.wait(activity_id, max(0.0, deadline - time.monotonic()))
    carried = services.waiter.take_answer(activity_id)
    if carried is not None:
        return Answer(text=carried)
    view = _read(services, activity_id, viewer)
    if view["status"] not in lifecycle.SETTLED and time.monotonic() < deadline:
        # Woken without settling (the notification listener reconnected): wait out the
        # rest of the time the classic way.
        services.waiter.wait(activity_id, max(0.0, deadline - time.monotonic()))
        view = _read(services, activity_id, viewer)
    if view["status"] == lifecycle.FAILED and view.get("failure"):
        raise from_failure(view["failure"])
    target_id = _vote_target(view)
    if target_id is None:
        return Answer(view)
    services.waiter.wait(target_id, max(0.0, deadline - time.monotonic()))
    return Answer(_read(services, target_id, viewer))


def _read(services: Services, activity_id: str, viewer: str | None) -> dict[str, Any]:
    with services.read_session_factory() as session:
        found = load_and_render(session, activity_id, viewer)
    assert found is not None, f"activity {activity_id} vanished"
    return found[1]


def _vote_target(view: dict[str, Any]) -> str | None:
    """The id of the activity a completed vote was cast on, if ``view`` shows one."""
    if view["status"] != lifecycle.COMPLETED:
        return None
    found = registry().by_type.get(view["type"])
    if found is None or not found[0].consensus_vote:
        return None
    body = (view.get("result") or {}).get(found[1].result_key) or {}
    target = body.get("activityId")
    return target if isinstance(target, str) else None


def _store(uow: UnitOfWork, envelope: SubmitBody, version: Version, params: dict[str, Any],
           body: bytes, fp: str, principal: Principal) -> ActivityRow:
    """Store the activity and its submitter's approval through the activity store, which
    tells the activity listeners first (the redaction seals secrets before anything is
    written) and writes both with what the listeners returned (one statement on
    PostgreSQL)."""
    moment = now()
    text = body.decode("utf-8")
    activity_id = new_id()
    activity = ActivityRow(
        id=activity_id, organization_id=envelope.organization_id, type=envelope.type,
        status=lifecycle.PENDING, fingerprint=fp, body=text,
        timestamp_ms=envelope.timestamp_ms, intent={version.intent_key: params},
        result={}, failure=None, user_id=principal.user_id, version=1,
        created_at=moment, updated_at=moment)
    vote = VoteRow(
        id=new_id(), activity_id=activity_id, user_id=principal.user_id, selection=APPROVED,
        message=text, public_key=principal.public_key, signature=principal.signature,
        scheme=principal.scheme, created_at=moment, updated_at=moment)
    return store.accept(uow, activity, vote)
