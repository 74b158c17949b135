"""Per-organization resource limits (PROTOCOL.md §10, Turnkey's resource-limits page).

The limits are data: one :class:`ResourceLimit` per countable resource, with its maximum in a
top-level organization and in a sub-organization (``None`` = unlimited). An activity that
would go over a limit fails with :class:`ResourceLimitExceeded` — a ``ResourceExhausted``,
so HTTP 429 / gRPC 8 — whose message names the limit, e.g.
``organization has exceeded maximum number of users (limit users_per_organization: 100)``.

Request-rate limits (requests per second) are not resource limits and are not implemented:
a deployment rate-limits in front of the ingress (docs/identity.md).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from infra.errors import ResourceExhausted


class Scope(StrEnum):
    """What a limit counts within."""

    ORGANIZATION = "organization"
    USER = "user"


class ResourceLimitExceeded(ResourceExhausted):
    """Creating the resource would exceed a per-organization or per-user limit (429)."""

    code = "resource_limit_exceeded"


@dataclass(frozen=True)
class ResourceLimit:
    """One countable resource and its maxima.

    Attributes:
        name: stable identifier, named in error messages (``users_per_organization``).
        noun: what is counted, for messages (``users``).
        scope: counted per organization or per user.
        maximum: the most a top-level organization (or a user in one) may hold.
        sub_organization_maximum: the same inside a sub-organization.
    """

    name: str
    noun: str
    scope: Scope
    maximum: int | None
    sub_organization_maximum: int | None

    def maximum_for(self, *, is_sub_organization: bool) -> int | None:
        """The maximum that applies in this kind of organization (``None`` = unlimited)."""
        return self.sub_organization_maximum if is_sub_organization else self.maximum

    def check(self, current: int, *, adding: int = 1, is_sub_organization: bool = False) -> None:
        """Raise if holding ``current`` and creating ``adding`` more would exceed the limit.

        Raises:
            ResourceLimitExceeded: with :meth:`message`.
        """
        maximum = self.maximum_for(is_sub_organization=is_sub_organization)
        if maximum is not None and current + adding > maximum:
            raise ResourceLimitExceeded(self.message(is_sub_organization=is_sub_organization))

    def message(self, *, is_sub_organization: bool = False) -> str:
        """The error message, naming the scope, the resource, the limit and its maximum."""
        maximum = self.maximum_for(is_sub_organization=is_sub_organization)
        if maximum == 0:
            return f"{self.noun} cannot be created in a sub-organization (limit {self.name}: 0)"
        where = "sub-organization" if is_sub_organization else "organization"
        scope = "user" if self.scope is Scope.USER else where
        return f"{scope} has exceeded maximum number of {self.noun} (limit {self.name}: {maximum})"


SUB_ORGANIZATIONS: Final = ResourceLimit(
    "sub_organizations_per_organization", "sub-organizations", Scope.ORGANIZATION, None, 0
)
WALLETS: Final = ResourceLimit(
    "wallets_per_organization", "HD wallets", Scope.ORGANIZATION, 100, 100
)
WALLET_ACCOUNTS: Final = ResourceLimit(
    "wallet_accounts_per_organization", "wallet accounts", Scope.ORGANIZATION, None, None
)
PRIVATE_KEYS: Final = ResourceLimit(
    "private_keys_per_organization", "private keys", Scope.ORGANIZATION, 1000, 1000
)
USERS: Final = ResourceLimit("users_per_organization", "users", Scope.ORGANIZATION, 100, 100)
POLICIES: Final = ResourceLimit(
    "policies_per_organization", "policies", Scope.ORGANIZATION, 100, 100
)
INVITATIONS: Final = ResourceLimit(
    "invitations_per_organization", "invitations", Scope.ORGANIZATION, 100, 100
)
#: User tags and private-key tags together.
TAGS: Final = ResourceLimit("tags_per_organization", "tags", Scope.ORGANIZATION, 100, 10)
SMART_CONTRACT_INTERFACES: Final = ResourceLimit(
    "smart_contract_interfaces_per_organization",
    "smart contract interfaces",
    Scope.ORGANIZATION,
    100,
    100,
)
AUTHENTICATORS: Final = ResourceLimit(
    "authenticators_per_user", "authenticators", Scope.USER, 10, 10
)
LONG_LIVED_API_KEYS: Final = ResourceLimit(
    "long_lived_api_keys_per_user", "long-lived API keys", Scope.USER, 10, 10
)
#: Never refused: creating one over the limit evicts others (:func:`expiring_keys_to_evict`).
EXPIRING_API_KEYS: Final = ResourceLimit(
    "expiring_api_keys_per_user", "expiring API keys", Scope.USER, 10, 10
)
OAUTH_PROVIDERS: Final = ResourceLimit(
    "oauth_providers_per_user", "OAuth providers", Scope.USER, 10, 10
)

#: Every limit by name.
LIMITS: Final[Mapping[str, ResourceLimit]] = {
    limit.name: limit
    for limit in (
        SUB_ORGANIZATIONS,
        WALLETS,
        WALLET_ACCOUNTS,
        PRIVATE_KEYS,
        USERS,
        POLICIES,
        INVITATIONS,
        TAGS,
        SMART_CONTRACT_INTERFACES,
        AUTHENTICATORS,
        LONG_LIVED_API_KEYS,
        EXPIRING_API_KEYS,
        OAUTH_PROVIDERS,
    )
}


@dataclass(frozen=True)
class ExpiringKey:
    """What eviction needs to know about one of a user's expiring API keys."""

    api_key_id: str
    created_at: datetime.datetime
    expires_at: datetime.datetime


def expiring_keys_to_evict(
    keys: Sequence[ExpiringKey],
    *,
    now: datetime.datetime,
    adding: int = 1,
    is_sub_organization: bool = False,
) -> list[str]:
    """Which expiring keys to delete so ``adding`` new ones fit under the per-user limit.

    Expired keys go first (oldest expiry first), then the oldest by creation. Returns an
    empty list when everything fits.

    Raises:
        ResourceLimitExceeded: ``adding`` alone is more than the limit.
    """
    maximum = EXPIRING_API_KEYS.maximum_for(is_sub_organization=is_sub_organization)
    if maximum is None:
        return []
    if adding > maximum:
        raise ResourceLimitExceeded(
            EXPIRING_API_KEYS.message(is_sub_organization=is_sub_organization)
        )
    excess = len(keys) + adding - maximum
    if excess <= 0:
        return []
    expired = sorted((k for k in keys if k.expires_at <= now), key=lambda k: k.expires_at)
    live = sorted((k for k in keys if k.expires_at > now), key=lambda k: k.created_at)
    return [k.api_key_id for k in (expired + live)[:excess]]
