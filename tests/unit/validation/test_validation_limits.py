"""Per-organization resource limits (infra.validation.limits)."""

from __future__ import annotations

import datetime

import pytest

from infra.errors import ResourceExhausted
from infra.validation import limits
from infra.validation.limits import ExpiringKey, ResourceLimitExceeded, expiring_keys_to_evict

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def test_limits_match_the_documented_numbers() -> None:
    expected = {
        "sub_organizations_per_organization": (None, 0),
        "wallets_per_organization": (100, 100),
        "wallet_accounts_per_organization": (None, None),
        "private_keys_per_organization": (1000, 1000),
        "users_per_organization": (100, 100),
        "policies_per_organization": (100, 100),
        "invitations_per_organization": (100, 100),
        "tags_per_organization": (100, 10),
        "authenticators_per_user": (10, 10),
        "long_lived_api_keys_per_user": (10, 10),
        "expiring_api_keys_per_user": (10, 10),
        "oauth_providers_per_user": (10, 10),
    }
    for name, (top, sub) in expected.items():
        limit = limits.LIMITS[name]
        assert (limit.maximum, limit.sub_organization_maximum) == (top, sub), name


def test_check_allows_up_to_the_maximum() -> None:
    limits.USERS.check(99)
    limits.USERS.check(95, adding=5)
    limits.WALLET_ACCOUNTS.check(10**6)


def test_exceeding_a_limit_is_a_429_that_names_the_limit() -> None:
    with pytest.raises(ResourceLimitExceeded) as info:
        limits.USERS.check(100)
    error = info.value
    assert isinstance(error, ResourceExhausted)
    assert error.to_wire()["code"] == 8
    assert error.message == (
        "organization has exceeded maximum number of users (limit users_per_organization: 100)"
    )


def test_per_user_limits_say_user() -> None:
    with pytest.raises(ResourceLimitExceeded, match=r"^user has exceeded maximum number of auth"):
        limits.AUTHENTICATORS.check(8, adding=3)


def test_sub_organizations_have_their_own_maxima() -> None:
    limits.TAGS.check(50)
    with pytest.raises(
        ResourceLimitExceeded, match=r"sub-organization .* tags_per_organization: 10"
    ):
        limits.TAGS.check(10, is_sub_organization=True)
    limits.SUB_ORGANIZATIONS.check(10_000)
    with pytest.raises(ResourceLimitExceeded, match="cannot be created in a sub-organization"):
        limits.SUB_ORGANIZATIONS.check(0, is_sub_organization=True)


def _key(n: int, *, expired: bool) -> ExpiringKey:
    created = NOW - datetime.timedelta(hours=100 - n)
    expires = NOW + datetime.timedelta(hours=-1 if expired else 1, minutes=n)
    return ExpiringKey(f"k{n}", created, expires)


def test_expiring_keys_under_the_limit_evict_nothing() -> None:
    keys = [_key(n, expired=False) for n in range(9)]
    assert expiring_keys_to_evict(keys, now=NOW) == []


def test_expiring_keys_evict_expired_first_then_oldest() -> None:
    keys = [_key(n, expired=n in (5, 7)) for n in range(10)]
    assert expiring_keys_to_evict(keys, now=NOW) == ["k5"]
    assert expiring_keys_to_evict(keys, now=NOW, adding=4) == ["k5", "k7", "k0", "k1"]


def test_adding_more_expiring_keys_than_the_limit_fails() -> None:
    with pytest.raises(ResourceLimitExceeded, match="expiring_api_keys_per_user"):
        expiring_keys_to_evict([], now=NOW, adding=11)
