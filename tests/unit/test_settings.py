"""Settings come from the environment; the ingress role never sees the master key."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.settings import Settings


def test_defaults_are_the_embedded_service() -> None:
    s = Settings.from_env({})
    assert s.broker_url == "memory://"
    assert s.effective_database_url.startswith("sqlite:///")
    assert s.master_key_file == str(Path("./data") / "master-keys.json")


def test_environment_overrides() -> None:
    s = Settings.from_env({"WALLETD_DATABASE_URL": "postgresql://x/y", "WALLETD_PORT": "9999",
                           "WALLETD_WEBHOOK_ALLOW": "127.0.0.1, 10.0.0.0/8"})
    assert s.effective_database_url == "postgresql://x/y"
    assert s.effective_base_url == "http://127.0.0.1:9999"
    assert s.webhook_allow == ("127.0.0.1", "10.0.0.0/8")


def test_bad_integer_names_the_variable() -> None:
    with pytest.raises(ValueError, match="WALLETD_PORT"):
        Settings.from_env({"WALLETD_PORT": "eighty"})


def test_ingress_role_has_no_master_key_location() -> None:
    s = Settings.from_env({"WALLETD_MASTER_KEY_FILE": "/secret/keys.json"})
    assert s.for_role("worker").master_key_file == "/secret/keys.json"
    assert s.for_role("ingress").master_key_file == ""


def test_oidc_settings() -> None:
    from infra.sessions.oauth2 import endpoints

    default = Settings.from_env({})
    assert default.oidc_issuers == ("https://accounts.google.com", "https://appleid.apple.com",
                                    "https://www.facebook.com")
    assert default.oidc_allow == ()
    assert endpoints(default, "OAUTH2_PROVIDER_X") == ("https://api.x.com/2/oauth2/token",
                                                       "https://api.x.com/2/users/me")
    s = Settings.from_env({"WALLETD_OIDC_ISSUERS": "https://a.example, https://b.example",
                           "WALLETD_OIDC_ALLOW": "127.0.0.0/8",
                           "WALLETD_OAUTH2_DISCORD_TOKEN_URL": "http://127.0.0.1:9/token"})
    assert s.oidc_issuers == ("https://a.example", "https://b.example")
    assert s.oidc_allow == ("127.0.0.0/8",)
    assert endpoints(s, "OAUTH2_PROVIDER_DISCORD") == ("http://127.0.0.1:9/token",
                                                       "https://discord.com/api/users/@me")
    assert Settings.from_env({"WALLETD_OIDC_ISSUERS": ""}).oidc_issuers == ()
