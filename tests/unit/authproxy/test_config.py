"""The auth proxy configuration: field checks, updates, defaults, views, the proxy policies."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from infra.authproxy.config import (
    DEFAULTS,
    UpdateParams,
    effective,
    enabled_providers,
    origin_allowed,
    proxy_policies,
    updated,
)
from infra.policy.parser import parse


@pytest.mark.parametrize("origin", ["https://app.example.com", "http://localhost:3000", "*"])
def test_origins_are_accepted(origin: str) -> None:
    assert UpdateParams.model_validate({"allowedOrigins": [origin]}).allowed_origins == [origin]


@pytest.mark.parametrize("origin", ["https://app.example.com/", "https://a.com/path", "ftp://a.com",
                                    "app.example.com", "https://user@a.com", "https://a.com?x"])
def test_non_origins_are_refused(origin: str) -> None:
    with pytest.raises(ValidationError, match="not an origin"):
        UpdateParams.model_validate({"allowedOrigins": [origin]})


def test_an_update_replaces_only_what_it_sends() -> None:
    stored = updated({}, UpdateParams.model_validate({"otpLength": 6, "allowedOrigins": ["*"]}))
    stored = updated(stored, UpdateParams.model_validate({"otpLength": 8}))
    assert stored == {"otpLength": 8, "allowedOrigins": ["*"]}
    view = effective(stored)
    assert set(view) == set(DEFAULTS) and view["otpLength"] == 8
    assert view["sessionExpirationSeconds"] == DEFAULTS["sessionExpirationSeconds"]


def test_enabled_providers_merge_methods_and_social_providers_once() -> None:
    view = effective({"allowedAuthMethods": ["email", "google"],
                      "walletKitSettings": {"enabledSocialProviders": ["google", "apple"]}})
    assert enabled_providers(view) == ["email", "google", "apple"]


def test_origin_checks() -> None:
    assert origin_allowed({"allowedOrigins": ["*"]}, "https://any.example")
    assert origin_allowed({"allowedOrigins": ["https://a.example"]}, "https://A.example")
    assert not origin_allowed({"allowedOrigins": ["https://a.example"]}, "https://b.example")
    assert origin_allowed({"allowedOrigins": ["https://a.example"]}, None)  # not a browser


def test_the_proxy_policies_parse_and_name_the_user() -> None:
    policies = proxy_policies("user-1")
    assert [p["effect"] for p in policies] == ["EFFECT_ALLOW", "EFFECT_DENY"]
    for policy in policies:
        for field in ("condition", "consensus"):
            if field in policy:
                parse(policy[field], field=field)
        assert "user-1" in policy["condition"] + policy.get("consensus", "")
