"""An organization's auth proxy configuration: its fields, defaults, checks and views.

Every field of ``v1UpdateAuthProxyConfigIntent`` is stored as sent (camelCase, in
``AuthProxyConfig.settings``); :func:`effective` fills in the defaults, and both the query
and the proxy read that. Enabling the proxy creates its user, the user's P-256 API key
(sealed to the proxy key, ``infra.authproxy.keys``) and the two policies that limit that
user to the authentication activities (:func:`proxy_policies`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pydantic import Field, field_validator
from sqlalchemy import select
from sqlalchemy.orm import Session

from infra.db.models.auth_proxy import AuthProxyConfig
from infra.errors import NotFound
from infra.wiremodel import WireModel

#: What ``allowedAuthMethods`` may name; ``wallet_kit_config`` answers them as
#: ``enabledProviders``. The social ones need an OAuth client id.
AUTH_METHODS = ("email", "sms", "passkey", "wallet", "google", "apple", "facebook", "x",
                "discord")
SOCIAL_METHODS = frozenset({"google", "apple", "facebook", "x", "discord"})
#: The kinds the proxy user may run (sign-up, OTP, OAuth, login); nothing else.
PROXY_KINDS = ("INIT_OTP", "VERIFY_OTP", "OTP_LOGIN", "OAUTH_LOGIN", "OAUTH2_AUTHENTICATE",
               "CREATE_SUB_ORGANIZATION")
MAX_OTP_EXPIRATION_SECONDS = 600
MAX_SESSION_EXPIRATION_SECONDS = 30 * 24 * 3600
MAX_ORIGINS = 100

DEFAULTS: dict[str, Any] = {
    "allowedOrigins": ["*"],
    "allowedAuthMethods": ["email", "sms", "passkey"],
    "sendFromEmailAddress": "",
    "replyToEmailAddress": "",
    "sendFromEmailSenderName": "",
    "emailAuthTemplateId": "",
    "otpTemplateId": "",
    "emailCustomizationParams": {},
    "smsCustomizationParams": {},
    "walletKitSettings": {"enabledSocialProviders": [], "oauthClientIds": {},
                          "oauthRedirectUrl": ""},
    "otpExpirationSeconds": 300,
    "verificationTokenExpirationSeconds": 3600,
    "sessionExpirationSeconds": 900,
    "otpAlphanumeric": True,
    "otpLength": 9,
    "verificationTokenRequiredForGetAccountPii": False,
    "socialLinkingClientIds": [],
    "captchaEnabled": False,
}


class EmailCustomization(WireModel):
    """``v1EmailCustomizationParams``."""

    app_name: str | None = Field(default=None, max_length=256)
    logo_url: str | None = Field(default=None, max_length=2048)
    magic_link_template: str | None = Field(default=None, max_length=2048)
    template_variables: str | None = Field(default=None, max_length=8192)
    template_id: str | None = Field(default=None, max_length=256)


class SmsCustomization(WireModel):
    """``v1SmsCustomizationParams``."""

    template: str | None = Field(default=None, max_length=1024)


class WalletKitSettings(WireModel):
    """``v1WalletKitSettingsParams``."""

    enabled_social_providers: list[str] = Field(default_factory=list, max_length=16)
    oauth_client_ids: dict[str, str] = Field(default_factory=dict, max_length=16)
    oauth_redirect_url: str | None = Field(default=None, max_length=2048)

    @field_validator("enabled_social_providers")
    @classmethod
    def _providers(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in SOCIAL_METHODS]
        if unknown:
            raise ValueError(f"unknown social provider {unknown[0]!r}; use one of "
                             f"{', '.join(sorted(SOCIAL_METHODS))}")
        return value


class UpdateParams(WireModel):
    """``v1UpdateAuthProxyConfigIntent``: each field sent replaces the stored one."""

    allowed_origins: list[str] | None = Field(default=None, max_length=MAX_ORIGINS)
    allowed_auth_methods: list[str] | None = Field(default=None, max_length=len(AUTH_METHODS))
    send_from_email_address: str | None = Field(default=None, max_length=320)
    reply_to_email_address: str | None = Field(default=None, max_length=320)
    email_auth_template_id: str | None = Field(default=None, max_length=256)
    otp_template_id: str | None = Field(default=None, max_length=256)
    email_customization_params: EmailCustomization | None = None
    sms_customization_params: SmsCustomization | None = None
    wallet_kit_settings: WalletKitSettings | None = None
    otp_expiration_seconds: int | None = Field(default=None, ge=30, le=MAX_OTP_EXPIRATION_SECONDS)
    verification_token_expiration_seconds: int | None = Field(default=None, ge=60, le=86400)
    session_expiration_seconds: int | None = Field(
        default=None, ge=60, le=MAX_SESSION_EXPIRATION_SECONDS)
    otp_alphanumeric: bool | None = None
    otp_length: int | None = Field(default=None, ge=6, le=9)
    send_from_email_sender_name: str | None = Field(default=None, max_length=256)
    verification_token_required_for_get_account_pii: bool | None = None
    social_linking_client_ids: list[str] | None = Field(default=None, max_length=32)
    captcha_enabled: bool | None = None

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else [check_origin(o) for o in value]

    @field_validator("allowed_auth_methods")
    @classmethod
    def _methods(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        unknown = [m for m in value if m not in AUTH_METHODS]
        if unknown:
            raise ValueError(f"unknown auth method {unknown[0]!r}; use any of "
                             f"{', '.join(AUTH_METHODS)}")
        return list(dict.fromkeys(value))


def check_origin(origin: str) -> str:
    """``*`` or a browser origin ``scheme://host[:port]`` (no path, query or trailing slash)."""
    if origin == "*":
        return origin
    parts = urlsplit(origin)
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.path
            or parts.query or parts.fragment or parts.username or parts.password):
        raise ValueError(f"{origin!r} is not an origin; send '*' or scheme://host[:port], "
                         "e.g. https://app.example.com")
    return origin.lower()


def updated(stored: dict[str, Any], params: UpdateParams) -> dict[str, Any]:
    """``stored`` with every field ``params`` carries replaced."""
    changes = params.model_dump(by_alias=True, exclude_unset=True, exclude_none=True, mode="json")
    result = dict(stored)
    result.update(changes)
    return result


def effective(stored: dict[str, Any]) -> dict[str, Any]:
    """Every updatable field, the stored value or its default."""
    out = {k: stored.get(k, v) for k, v in DEFAULTS.items()}
    kit = dict(DEFAULTS["walletKitSettings"])
    kit.update(stored.get("walletKitSettings") or {})
    out["walletKitSettings"] = kit
    return out


def enabled_providers(settings: dict[str, Any]) -> list[str]:
    """``allowedAuthMethods`` then the wallet kit's social providers (each once)."""
    kit = settings.get("walletKitSettings") or {}
    return list(dict.fromkeys([*settings["allowedAuthMethods"],
                               *kit.get("enabledSocialProviders", [])]))


def render(config: AuthProxyConfig) -> dict[str, Any]:
    """``{configId, enabled, userId, organizationId, ...every updatable field}``."""
    return {"configId": config.id, "enabled": bool(config.enabled), "userId": config.user_id,
            "organizationId": config.organization_id, **effective(config.settings or {})}


def proxy_policies(user_id: str) -> list[dict[str, str]]:
    """The two policies that confine the proxy user to the authentication activities.

    The proxy user's own approval is part of the ``condition`` (not the ``consensus``), so the
    allow applies to nothing else anybody submits; the deny makes the limit explicit, so no
    default (such as users managing their own credentials) lets the proxy key do more.
    """
    its = f"approvers.any(user, user.id == '{user_id}')"
    kinds = "[" + ", ".join(f"'{k}'" for k in PROXY_KINDS) + "]"
    return [
        {"policyName": "Auth proxy: authentication activities", "effect": "EFFECT_ALLOW",
         "condition": f"{its} && activity.kind in {kinds}",
         "notes": "Installed by enable_auth_proxy: the proxy user signs users up and logs them in."},
        {"policyName": "Auth proxy: nothing else", "effect": "EFFECT_DENY",
         "consensus": its, "condition": f"!(activity.kind in {kinds})",
         "notes": "Installed by enable_auth_proxy: the proxy user may do nothing else."},
    ]


def config_of(session: Session, organization_id: str) -> AuthProxyConfig:
    """The organization's configuration row, or a 404 saying to enable the proxy first."""
    row = session.scalar(select(AuthProxyConfig).where(
        AuthProxyConfig.organization_id == organization_id))
    if row is None:
        raise NotFound("the auth proxy is not enabled for this organization; submit "
                       "enable_auth_proxy first")
    return row


def origin_allowed(settings: dict[str, Any], origin: str | None) -> bool:
    """Whether a request from ``origin`` may use the proxy (no Origin: not a browser, allowed)."""
    if origin is None:
        return True
    allowed = settings.get("allowedOrigins") or ["*"]
    return "*" in allowed or origin.lower() in allowed

