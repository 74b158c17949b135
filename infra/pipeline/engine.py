"""Decide whether an activity may run: the pure policy engine (PROTOCOL.md §8.4).

:func:`evaluate` takes the organization's policies and root quorum and one
:class:`Proposal` (the activity, its live approvers and rejecters, and the condition
variables) and returns a :class:`PolicyVerdict`. The order is:

1. hard denials (feature gates, e.g. "imports must target your own user") ⇒ explicit deny;
2. a reject vote ⇒ ``OUTCOME_REJECTED``;
3. enough root users among the approvers ⇒ allow, policies bypassed;
   root-quorum-only types (and proposals flagged ``root_quorum_only``: changes to the
   credentials, contacts or MFA of another user who has MFA policies) stop here (waiting
   for root votes, or implicitly denied); a root user's vote on an activity they may vote
   on is allowed too, policies bypassed (it is how the root quorum is reached, and no
   policy may limit it);
4. any applicable ``EFFECT_DENY`` policy ⇒ explicit deny (deny always wins), unless some
   root users approved but not yet enough: then ``OUTCOME_REQUIRES_CONSENSUS``, because no
   policy may limit what the root quorum does (§8.4) and the other roots must get to vote;
5. an applicable ``EFFECT_ALLOW`` whose consensus holds ⇒ allow;
6. an applicable ``EFFECT_ALLOW`` whose consensus does not hold yet ⇒
   ``OUTCOME_REQUIRES_CONSENSUS``;
7. defaults ⇒ allow: users manage their own credentials; a vote by a user entitled to vote
   on its target (``Proposal.voter_entitled``: the target's submitter, a root user, or a
   user its pending consensus names; see ``infra.pipeline.votes.may_vote``);
8. some but not enough root approvers ⇒ ``OUTCOME_REQUIRES_CONSENSUS`` (root quorum > 1);
9. nothing ⇒ implicit deny.

Per policy: ``time`` false ⇒ ``OUTCOME_TIME_INACTIVE`` (skipped); any expression that fails to
parse or evaluate ⇒ ``OUTCOME_ERROR`` (the policy does not apply); otherwise it applies when
its ``condition`` holds (absent = true). An applicable ALLOW reports ``OUTCOME_ALLOW`` or
``OUTCOME_REQUIRES_CONSENSUS``; a DENY applies only when its ``consensus`` (absent = true)
also holds and reports ``OUTCOME_DENY_EXPLICIT``; a policy that does not apply reports
``OUTCOME_DENY_IMPLICIT``. No I/O happens here: callers load rows, call this, store the result.

Each policy is compiled once per process (:func:`compiled_policy`, keyed by the policy's value,
so a changed text is a new entry): its expressions parsed, a parse error kept as its outcome,
and the outcomes that carry no detail built in advance. Evaluating it then runs only the
compiled expressions against the variables built once per proposal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any

from infra.pipeline.gates import hard_denial
from infra.policy.evaluator import PolicyEvaluationFailed, compiled
from infra.policy.parser import InvalidPolicyExpression
from infra.policy.variables import (
    ROOT_QUORUM_KINDS,
    ResourceAction,
    activity_kind,
    activity_variable,
)

EXPLICIT_DENY_MESSAGE = "policy engine denied request explicitly"
IMPLICIT_DENY_MESSAGE = "policy engine denied request implicitly"  # wording UNCONFIRMED
MFA_GUARD_MESSAGE = ("only the root quorum may change the credentials, contacts or MFA "
                     "policies of another user who has MFA policies")


class Outcome(StrEnum):
    """``v1Outcome`` from the swagger."""

    ALLOW = "OUTCOME_ALLOW"
    DENY_EXPLICIT = "OUTCOME_DENY_EXPLICIT"
    DENY_IMPLICIT = "OUTCOME_DENY_IMPLICIT"
    REQUIRES_CONSENSUS = "OUTCOME_REQUIRES_CONSENSUS"
    REJECTED = "OUTCOME_REJECTED"
    ERROR = "OUTCOME_ERROR"
    REQUIRES_AUTHENTICATORS = "OUTCOME_REQUIRES_AUTHENTICATORS"
    TIME_INACTIVE = "OUTCOME_TIME_INACTIVE"


class Effect(StrEnum):
    """``v1Effect``."""

    ALLOW = "EFFECT_ALLOW"
    DENY = "EFFECT_DENY"


@dataclass(frozen=True)
class Policy:
    """One stored policy; empty expressions mean "absent"."""

    policy_id: str
    effect: str
    condition: str = ""
    consensus: str = ""
    time: str = ""


@dataclass(frozen=True)
class RootQuorum:
    """The organization's root users and how many of them must approve."""

    threshold: int
    user_ids: frozenset[str]


@dataclass(frozen=True)
class Proposal:
    """An activity awaiting a decision, as the engine sees it.

    ``approvers`` are ``User`` dicts (``infra.policy.variables.user_variable``) of everyone with
    a live approval, the submitter included (submission is the first approval); ``rejecters``
    are user ids with a reject vote; ``context`` holds the other condition variables
    (``wallet``, ``private_key``, ``eth``, …) keyed by keyword; ``features`` the organization
    features (``FEATURE_NAME_*`` → value) the feature gates read. For a vote
    (approve/reject), ``voter_entitled`` says whether the requester may vote on its target
    without a policy allowing it.
    """

    activity_type: str
    parameters: Mapping[str, Any]
    requester_id: str
    approvers: Sequence[Mapping[str, Any]] = ()
    credentials: Sequence[Mapping[str, Any]] = ()
    rejecters: Sequence[str] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    features: Mapping[str, str] = field(default_factory=dict)
    voter_entitled: bool = False
    #: Only the root quorum may decide it although its type is not root-quorum-only: it
    #: changes the credentials, contacts or MFA of another user who has MFA policies
    #: (``infra.pipeline.mfa.needs_target_quorum``).
    root_quorum_only: bool = False
    #: ``activity.resource`` / ``action``: what the type's spec states
    #: (``Registry.resource_action``); required, so no proposal misses what DENY policies on
    #: a resource would match.
    resource_action: ResourceAction | None = field(kw_only=True)

    @property
    def kind(self) -> str:
        """Version-agnostic activity name."""
        return activity_kind(self.activity_type)

    def approver_ids(self) -> frozenset[str]:
        """Distinct ids of the approvers."""
        return frozenset(str(a.get("id")) for a in self.approvers)


@dataclass(frozen=True)
class PolicyOutcome:
    """How one policy evaluated; ``detail`` explains errors."""

    policy_id: str
    outcome: Outcome
    detail: str = ""


@dataclass(frozen=True)
class PolicyVerdict:
    """The engine's verdict with its reason and the outcome of every policy evaluated."""

    outcome: Outcome
    reason: str
    policy_outcomes: tuple[PolicyOutcome, ...] = ()
    by_gate: bool = False

    @property
    def allowed(self) -> bool:
        """The activity may run now."""
        return self.outcome is Outcome.ALLOW

    @property
    def needs_consensus(self) -> bool:
        """The activity waits for more votes (``ACTIVITY_STATUS_CONSENSUS_NEEDED``)."""
        return self.outcome is Outcome.REQUIRES_CONSENSUS

    @property
    def denied(self) -> bool:
        """The request is refused (403, gRPC 7)."""
        return self.outcome in (Outcome.DENY_EXPLICIT, Outcome.DENY_IMPLICIT)

    @property
    def message(self) -> str:
        """The wire error message for a denial (a hard denial says what it is)."""
        if self.by_gate:
            return self.reason
        if self.outcome is Outcome.DENY_EXPLICIT:
            return EXPLICIT_DENY_MESSAGE
        if self.outcome is Outcome.DENY_IMPLICIT:
            return IMPLICIT_DENY_MESSAGE
        return self.reason


# Activities every user may perform on their own behalf unless a policy says otherwise.
OWN_CREDENTIAL_KINDS = frozenset(
    {"CREATE_API_KEYS", "CREATE_AUTHENTICATORS", "CREATE_OAUTH_PROVIDERS", "DELETE_API_KEYS",
     "DELETE_AUTHENTICATORS", "DELETE_OAUTH_PROVIDERS"}
)  # fmt: skip
VOTE_KINDS = frozenset({"APPROVE_ACTIVITY", "REJECT_ACTIVITY"})
#: Sessions for the requester's own user (stamp_login has no userId: always its own).
OWN_SESSION_KINDS = frozenset({"STAMP_LOGIN", "CREATE_READ_ONLY_SESSION",
                               "CREATE_READ_WRITE_SESSION"})
#: Versions that name the user by email: never the requester's own session by default.
OTHER_USER_SESSION_TYPES = frozenset({"ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION"})


Check = Callable[[Mapping[str, Any]], bool]


class CompiledPolicy:
    """One policy ready to evaluate: its expressions compiled (or their parse errors kept as
    its outcome) in the order they run, and its detail-free outcomes built once."""

    __slots__ = ("_allow", "_broken", "_condition", "_consensus", "_deny", "_implicit",
                 "_inactive", "_is_deny", "_needs_votes", "_time", "_unknown", "policy_id")

    def __init__(self, policy: Policy) -> None:
        self.policy_id = pid = policy.policy_id
        self._time: Check | None = None
        self._condition: Check | None = None
        self._consensus: Check | None = None
        self._broken: PolicyOutcome | None = None
        fields = (("_time", policy.time, "time"), ("_condition", policy.condition, "condition"),
                  ("_consensus", policy.consensus, "consensus"))
        for slot, text, name in fields:
            if not text:
                continue
            try:
                setattr(self, slot, compiled(text, name).evaluate)
            except InvalidPolicyExpression as ex:
                # Its turn comes after the fields before it ran (their errors win), as before.
                self._broken = PolicyOutcome(pid, Outcome.ERROR, ex.message)
                break
        self._inactive = PolicyOutcome(pid, Outcome.TIME_INACTIVE)
        self._implicit = PolicyOutcome(pid, Outcome.DENY_IMPLICIT)
        self._deny = PolicyOutcome(pid, Outcome.DENY_EXPLICIT)
        self._allow = PolicyOutcome(pid, Outcome.ALLOW)
        self._needs_votes = PolicyOutcome(pid, Outcome.REQUIRES_CONSENSUS)
        self._is_deny = policy.effect == Effect.DENY
        self._unknown = None if policy.effect in (Effect.ALLOW, Effect.DENY) else PolicyOutcome(
            pid, Outcome.ERROR, f"unknown effect {policy.effect}")

    def __call__(self, env: Mapping[str, Any]) -> PolicyOutcome:
        """This policy's outcome against the variables ``env`` (never raises)."""
        time, condition, consensus = self._time, self._condition, self._consensus
        try:
            if time is not None and not time(env):
                return self._inactive
            # No short circuit: both expressions run, so an error in either is an error.
            holds = condition is None or condition(env)
            agreed = consensus is None or consensus(env)
        except PolicyEvaluationFailed as ex:
            return PolicyOutcome(self.policy_id, Outcome.ERROR, ex.message)
        if self._broken is not None:  # every expression before the unparseable one ran
            return self._broken
        if self._is_deny:
            return self._deny if holds and agreed else self._implicit
        if self._unknown is not None:
            return self._unknown
        if not holds:
            return self._implicit
        return self._allow if agreed else self._needs_votes


@lru_cache(maxsize=4096)
def _compiled(policy_id: str, effect: str, condition: str, consensus: str, time: str) -> CompiledPolicy:
    return CompiledPolicy(Policy(policy_id, effect, condition, consensus, time))


def compiled_policy(policy: Policy) -> CompiledPolicy:
    """``policy`` compiled once per process, keyed by every field: a changed text (or effect,
    or id) is a new entry, never the old compilation."""
    return _compiled(policy.policy_id, policy.effect, policy.condition, policy.consensus,
                     policy.time)


def clear_compiled() -> None:
    """Forget every compiled policy and expression (benchmarks measure the cold path)."""
    _compiled.cache_clear()
    compiled.cache_clear()


def evaluate_policy(policy: Policy, env: Mapping[str, Any]) -> PolicyOutcome:
    """One policy's outcome against the variables ``env`` (never raises for bad policies)."""
    return compiled_policy(policy)(env)


def variables_for(proposal: Proposal) -> dict[str, Any]:
    """The variables mapping for ``proposal`` (context first, so core keywords win)."""
    env: dict[str, Any] = dict(proposal.context)
    env["activity"] = activity_variable(proposal.activity_type, proposal.parameters,
                                        proposal.resource_action)
    env["approvers"] = list(proposal.approvers)
    env["credentials"] = list(proposal.credentials)
    env["time"] = {"now": proposal.now}
    return env


def _default_allows(proposal: Proposal) -> str | None:
    kind = proposal.kind
    if kind in VOTE_KINDS and proposal.voter_entitled:
        return "default: the submitter, root users and named approvers may vote"
    if kind in OWN_CREDENTIAL_KINDS and proposal.parameters.get("userId") == proposal.requester_id:
        return "default: users may manage their own credentials"
    if (kind in OWN_SESSION_KINDS and proposal.activity_type not in OTHER_USER_SESSION_TYPES
            and proposal.parameters.get("userId", proposal.requester_id) == proposal.requester_id):
        return "default: users may log themselves in"
    return None


def _root_approvers(proposal: Proposal, quorum: RootQuorum | None) -> frozenset[str]:
    return proposal.approver_ids() & quorum.user_ids if quorum else frozenset()


def _root_step(proposal: Proposal, quorum: RootQuorum | None) -> PolicyVerdict | None:
    roots = _root_approvers(proposal, quorum)
    if quorum and quorum.threshold > 0 and len(roots) >= quorum.threshold:
        return PolicyVerdict(Outcome.ALLOW, f"root quorum met ({len(roots)}/{quorum.threshold})")
    if proposal.kind not in ROOT_QUORUM_KINDS and not proposal.root_quorum_only:
        return None
    if roots:
        threshold = quorum.threshold if quorum else 0
        return PolicyVerdict(Outcome.REQUIRES_CONSENSUS,
                             f"root quorum not met yet ({len(roots)}/{threshold})")
    if proposal.kind not in ROOT_QUORUM_KINDS:
        return PolicyVerdict(Outcome.DENY_IMPLICIT, MFA_GUARD_MESSAGE, by_gate=True)
    return PolicyVerdict(Outcome.DENY_IMPLICIT, "only the root quorum may perform this activity")


def _root_vote(proposal: Proposal, quorum: RootQuorum | None) -> PolicyVerdict | None:
    if proposal.kind in VOTE_KINDS and proposal.voter_entitled and _root_approvers(proposal, quorum):
        return PolicyVerdict(Outcome.ALLOW, "a root user's vote: policies cannot limit the root quorum")
    return None


def decided_before_policies(proposal: Proposal, root_quorum: RootQuorum | None) -> bool:
    """Whether gates, rejections or the root quorum settle ``proposal`` (policies unused)."""
    if hard_denial(proposal.activity_type, proposal.parameters, proposal.requester_id,
                   proposal.features):
        return True
    return (bool(proposal.rejecters) or _root_step(proposal, root_quorum) is not None
            or _root_vote(proposal, root_quorum) is not None)


def evaluate(
    policies: Sequence[Policy], proposal: Proposal, root_quorum: RootQuorum | None = None
) -> PolicyVerdict:
    """Decide ``proposal`` under ``policies`` and ``root_quorum`` (see the module docstring)."""
    denial = hard_denial(
        proposal.activity_type, proposal.parameters, proposal.requester_id, proposal.features
    )
    if denial:
        return PolicyVerdict(Outcome.DENY_EXPLICIT, denial, by_gate=True)
    if proposal.rejecters:
        return PolicyVerdict(Outcome.REJECTED, "rejected by " + ", ".join(sorted(proposal.rejecters)))
    root = _root_step(proposal, root_quorum) or _root_vote(proposal, root_quorum)
    if root is not None:
        return root
    env = variables_for(proposal)
    outcomes = tuple([_compiled(p.policy_id, p.effect, p.condition, p.consensus, p.time)(env)
                      for p in policies])
    found = {o.outcome for o in outcomes}
    # Root approvers short of the threshold (``_root_step`` allowed a full quorum already).
    roots = _root_approvers(proposal, root_quorum)
    waiting = f"root quorum not met yet ({len(roots)}/{root_quorum.threshold if root_quorum else 0})"
    if Outcome.DENY_EXPLICIT in found:
        if roots:
            # No policy limits the root quorum: let the other roots vote instead of refusing.
            return PolicyVerdict(Outcome.REQUIRES_CONSENSUS, f"a policy denies the activity; {waiting}",
                            outcomes)
        return PolicyVerdict(Outcome.DENY_EXPLICIT, "a policy denies the activity", outcomes)
    if Outcome.ALLOW in found:
        return PolicyVerdict(Outcome.ALLOW, "a policy allows the activity", outcomes)
    if Outcome.REQUIRES_CONSENSUS in found:
        return PolicyVerdict(Outcome.REQUIRES_CONSENSUS, "waiting for policy consensus", outcomes)
    default = _default_allows(proposal)
    if default:
        return PolicyVerdict(Outcome.ALLOW, default, outcomes)
    if roots:
        return PolicyVerdict(Outcome.REQUIRES_CONSENSUS, waiting, outcomes)
    return PolicyVerdict(Outcome.DENY_IMPLICIT, "no policy allows the activity", outcomes)
