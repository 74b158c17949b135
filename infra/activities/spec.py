"""What the registry knows about one activity type, and what its handler receives."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from infra.policy.variables import ResourceAction
from infra.wiremodel import WireModel

if TYPE_CHECKING:
    from infra.db.activity_rows import ActivityRow
    from infra.db.unit_of_work import UnitOfWork
    from infra.services import Services


@dataclass(frozen=True)
class Version:
    """One accepted ``ACTIVITY_TYPE_*`` of a path.

    Attributes:
        type: e.g. ``ACTIVITY_TYPE_CREATE_API_KEYS_V2``.
        params: The typed parameters model.
        intent_key: Key of ``activity.intent`` (e.g. ``createApiKeysIntentV2``).
        result_key: Key of ``activity.result`` (e.g. ``createApiKeysResult``).
    """

    type: str
    params: builtins.type[WireModel]
    intent_key: str
    result_key: str


@dataclass
class ActivityContext:
    """Everything a handler may use. Handlers depend on this, not on infrastructure.

    Attributes:
        uow: The unit of work; all effects go through its session and commit together with
            the activity's completion; whatever must wait for that commit (a broker send)
            goes to ``uow.after_commit``.
        activity: The activity row being executed (a frozen value, ``infra.db.activity_rows``).
        organization_id: The organization the activity runs in.
        user_id: The submitting user.
        version: The accepted version the activity was submitted as.
        now: The execution time.
        services: Process services (settings, broker, and for workers the key ring).
    """

    uow: UnitOfWork
    activity: ActivityRow
    organization_id: str
    user_id: str | None
    version: Version
    now: datetime
    services: Services

    @property
    def session(self) -> Session:
        """The unit of work's session."""
        return self.uow.session


Handler = Callable[[Any, ActivityContext], dict[str, Any]]
Check = Callable[[Any, "CheckContext"], None]


@dataclass
class CheckContext:
    """What ingress-side checks (run before the activity is stored) may read."""

    session: Session
    organization_id: str
    user_id: str
    now: datetime


@dataclass(frozen=True)
class ActivitySpec:
    """One activity path and everything generic code needs to run it.

    Attributes:
        path: The ``/public/v1/submit/<path>`` name (snake_case ``verb_noun``).
        versions: Accepted versioned types; the first is the current one.
        execute: ``execute(params, ctx) -> result body`` (runs in a worker).
        pool: The queue it executes on (``infra.messaging.queues``).
        resource / action: What policies read as ``activity.resource`` / ``activity.action``
            (PROTOCOL.md §8.3; values from the documented enums, checked here). The one
            place they are stated: ``infra.policy.variables.activity_variable`` is given
            :attr:`resource_action`. ``None`` for both only where the docs give the type
            none (the votes): a policy reading them then evaluates to ``OUTCOME_ERROR``.
        check: Optional read-only check run by the ingress before storing (fast 4xx).
        parent_may_submit: A parent organization's credential may submit it for a
            sub-organization (email/OTP style activities).
        root_quorum_only: Policies are ignored; only the root quorum may run it. The engine
            reads ``infra.policy.variables.ROOT_QUORUM_KINDS``; a registry test keeps the two
            equal.
        consensus_vote: It is a vote on another activity (approve/reject).
    """

    path: str
    versions: tuple[Version, ...]
    execute: Handler
    pool: str
    resource: str | None
    action: str | None
    check: Check | None = None
    parent_may_submit: bool = False
    root_quorum_only: bool = False
    consensus_vote: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.resource is None) != (self.action is None):
            raise ValueError(f"activity {self.path!r}: resource and action are given together")
        if self.resource is not None and self.action is not None:
            ResourceAction(self.resource, self.action)  # refuses values the docs do not list

    @property
    def resource_action(self) -> ResourceAction | None:
        """``activity.resource`` / ``activity.action`` as policies see them."""
        if self.resource is None or self.action is None:
            return None
        return ResourceAction(self.resource, self.action)

    def version_for(self, type_name: str) -> Version | None:
        """The accepted version named ``type_name``, if any."""
        return next((v for v in self.versions if v.type == type_name), None)
