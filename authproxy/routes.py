"""Every path of the auth proxy swagger: what it forwards, and how the answer is shaped.

Each handler takes the request body (a dict) and the configuration and returns the
response body; the activities run as the proxy user in the configuration's organization
(``authproxy.upstream``). Requests and answers use the swagger's field names; the v1 OTP
paths also take the snake-case spellings the service's documentation shows
(``public_key``, ``client_signature``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from authproxy.signup_request import parse_signup, require_a_way_in
from authproxy.tokens import check_signup, verified_claims
from authproxy.upstream import Config, Upstream
from infra.authproxy.config import SOCIAL_METHODS, enabled_providers
from infra.errors import InvalidRequest, NotFound, PermissionDenied

Handler = Callable[[Upstream, Config, dict[str, Any]], dict[str, Any]]
OTP_METHODS = {"OTP_TYPE_EMAIL": "email", "OTP_TYPE_SMS": "sms"}
OAUTH2_PROVIDERS = ("OAUTH2_PROVIDER_X", "OAUTH2_PROVIDER_DISCORD")
ACCOUNT_FILTERS = ("EMAIL", "PHONE_NUMBER", "OIDC_TOKEN", "PUBLIC_KEY")


def _text(body: dict[str, Any], *names: str, required: bool = True) -> str | None:
    """The first of ``names`` present (a non-empty string), or a 400 naming the field."""
    for name in names:
        value = body.get(name)
        if value is not None:
            if not isinstance(value, str) or not value:
                raise InvalidRequest(f"{names[0]} must be a non-empty string", field=names[0])
            return value
    if required:
        raise InvalidRequest(f"{names[0]} is required", field=names[0])
    return None


def _field(body: dict[str, Any], *names: str) -> Any:
    return next((body[n] for n in names if body.get(n) is not None), None)


def _require_method(config: Config, method: str) -> None:
    if method not in enabled_providers(config.data):
        raise PermissionDenied(f"sign-in by {method} is not enabled for this auth proxy "
                               "(allowedAuthMethods)")


# -- OTP -----------------------------------------------------------------------------------
def _otp_init(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    otp_type = _text(body, "otpType")
    if otp_type not in OTP_METHODS:
        raise InvalidRequest("otpType must be OTP_TYPE_EMAIL or OTP_TYPE_SMS", field="otpType")
    _require_method(config, OTP_METHODS[otp_type])
    contact = _text(body, "contact")
    email = dict(config["emailCustomizationParams"] or {})
    requested = body.get("emailCustomization")
    if isinstance(requested, dict) and isinstance(requested.get("templateId"), str):
        email["templateId"] = requested["templateId"]
    elif config["emailAuthTemplateId"]:
        email.setdefault("templateId", config["emailAuthTemplateId"])
    sms = dict(config["smsCustomizationParams"] or {})
    return upstream.submit(config, "init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", {
        "otpType": otp_type, "contact": contact,
        "appName": email.get("appName") or "walletd",
        "otpLength": config["otpLength"], "alphanumeric": config["otpAlphanumeric"],
        "expirationSeconds": str(config["otpExpirationSeconds"]),
        "emailCustomization": email or None, "smsCustomization": sms or None,
        "sendFromEmailAddress": config["sendFromEmailAddress"] or None,
        "sendFromEmailSenderName": config["sendFromEmailSenderName"] or None,
        "replyToEmailAddress": config["replyToEmailAddress"] or None,
    })


def otp_init(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/otp_init`` → ``{otpId}``."""
    return {"otpId": _otp_init(upstream, config, body)["otpId"]}


def otp_init_v2(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/otp_init_v2`` → ``{otpId, otpEncryptionTargetBundle}``."""
    result = _otp_init(upstream, config, body)
    return {"otpId": result["otpId"],
            "otpEncryptionTargetBundle": result.get("otpEncryptionTargetBundle", "")}


def otp_verify(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/otp_verify`` (``publicKey`` or ``public_key``) → ``{verificationToken}``."""
    result = upstream.submit(config, "verify_otp", "ACTIVITY_TYPE_VERIFY_OTP", {
        "otpId": _text(body, "otpId"), "otpCode": _text(body, "otpCode"),
        "publicKey": _text(body, "publicKey", "public_key", required=False),
        "expirationSeconds": str(config["verificationTokenExpirationSeconds"])})
    return {"verificationToken": result["verificationToken"]}


def otp_verify_v2(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/otp_verify_v2`` → ``{verificationToken}``."""
    result = upstream.submit(config, "verify_otp", "ACTIVITY_TYPE_VERIFY_OTP_V2", {
        "otpId": _text(body, "otpId"), "encryptedOtpBundle": _text(body, "encryptedOtpBundle"),
        "expirationSeconds": str(config["verificationTokenExpirationSeconds"])})
    return {"verificationToken": result["verificationToken"]}


def _client_signature(body: dict[str, Any], why: str) -> dict[str, Any]:
    """``clientSignature`` (or ``client_signature``), required (PROTOCOL.md §7.4)."""
    signature = _field(body, "clientSignature", "client_signature")
    if not isinstance(signature, dict):
        raise InvalidRequest(f"clientSignature is required {why}: sign the usage message with "
                             "the key the verification token is bound to", field="clientSignature")
    return signature


def _otp_login(upstream: Upstream, config: Config, body: dict[str, Any],
               type_: str) -> dict[str, Any]:
    result = upstream.submit(config, "otp_login", type_, {
        "verificationToken": _text(body, "verificationToken"),
        "publicKey": _text(body, "publicKey", "public_key"),
        "clientSignature": _client_signature(body, "to log in with a verification token"),
        "invalidateExisting": _field(body, "invalidateExisting"),
        "expirationSeconds": str(config["sessionExpirationSeconds"]),
    }, organization_id=_text(body, "organizationId", required=False))
    return {"session": result["session"]}


def otp_login(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/otp_login`` (``clientSignature`` or ``client_signature``) → ``{session}``."""
    return _otp_login(upstream, config, body, "ACTIVITY_TYPE_OTP_LOGIN")


def otp_login_v2(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/otp_login_v2`` → ``{session}``."""
    return _otp_login(upstream, config, body, "ACTIVITY_TYPE_OTP_LOGIN_V2")


# -- OAuth ---------------------------------------------------------------------------------
def _require_social(config: Config) -> None:
    if not SOCIAL_METHODS & set(enabled_providers(config.data)):
        raise PermissionDenied("social sign-in is not enabled for this auth proxy "
                               "(allowedAuthMethods)")


def oauth_login(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/oauth_login`` → ``{session}``."""
    _require_social(config)
    result = upstream.submit(config, "oauth_login", "ACTIVITY_TYPE_OAUTH_LOGIN", {
        "oidcToken": _text(body, "oidcToken"), "publicKey": _text(body, "publicKey"),
        "invalidateExisting": _field(body, "invalidateExisting"),
        "expirationSeconds": str(config["sessionExpirationSeconds"]),
    }, organization_id=_text(body, "organizationId", required=False))
    return {"session": result["session"]}


def oauth2_authenticate(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/oauth2_authenticate``: the code exchange at X/Discord → ``{oidcToken}``."""
    _require_social(config)
    provider = _text(body, "provider")
    if provider not in OAUTH2_PROVIDERS:
        raise InvalidRequest(f"provider must be one of {', '.join(OAUTH2_PROVIDERS)}",
                             field="provider")
    client_id = _text(body, "clientId")
    credentials = upstream.query(config, "list_oauth2_credentials", {}).get("oauth2Credentials", [])
    credential = next((c for c in credentials if c.get("provider") == provider
                       and c.get("clientId") == client_id), None)
    if credential is None:
        raise NotFound(f"no OAuth 2.0 credential for {provider} with client id {client_id}: "
                       "register it with create_oauth2_credential")
    result = upstream.submit(config, "oauth2_authenticate", "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", {
        "oauth2CredentialId": credential["oauth2CredentialId"],
        "authCode": _text(body, "authCode"), "redirectUri": _text(body, "redirectUri"),
        "codeVerifier": _text(body, "codeVerifier"), "nonce": _text(body, "nonce")})
    return {"oidcToken": result["oidcToken"]}


# -- accounts ------------------------------------------------------------------------------
def _signup(upstream: Upstream, config: Config, body: dict[str, Any], *,
            v2: bool) -> dict[str, Any]:
    signup = parse_signup(body, v2=v2)
    require_a_way_in(signup)
    token, email, phone = signup.verification_token, signup.user_email, signup.user_phone_number
    signature = _client_signature(body, "to sign up with a verification token") if token else None
    if (email or phone) and not token:
        raise InvalidRequest("signing up with an email or phone number needs the verificationToken "
                             "of a verified one-time code for it (otp_init, then otp_verify)",
                             field="verificationToken")
    if token and signature is not None:
        check_signup(upstream.token_keys, body, token, signature)
    if signup.authenticators:
        _require_method(config, "passkey")
    if signup.oauth_providers:
        _require_social(config)
    lists = {"apiKeys": [k.wire() for k in signup.api_keys],
             "authenticators": [a.wire() for a in signup.authenticators],
             "oauthProviders": [p.wire() for p in signup.oauth_providers]}
    name = signup.user_name or email or phone or "User"
    result = upstream.submit(config, "create_sub_organization",
                             "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        "subOrganizationName": signup.organization_name or name,
        "rootUsers": [{k: v for k, v in {"userName": name, "userEmail": email,
                                         "userPhoneNumber": phone, **lists}.items()
                       if v is not None}],
        "rootQuorumThreshold": 1,
        "wallet": signup.wallet.wire() if signup.wallet else None,
        "verificationToken": token,
        "clientSignature": signature,
    })
    answer: dict[str, Any] = {"organizationId": result["subOrganizationId"],
                              "userId": (result.get("rootUserIds") or [""])[0]}
    if result.get("wallet"):
        answer["wallet"] = result["wallet"]
    return answer


def signup(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/signup`` (``v1SignupRequest``) → ``{organizationId, userId, wallet?}``."""
    return _signup(upstream, config, body, v2=False)


def signup_v2(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/signup_v2`` (``v1SignupV2Request``) → ``{organizationId, userId, wallet?}``."""
    return _signup(upstream, config, body, v2=True)


def account(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/account``: the sub-organization holding a contact, key or OIDC identity."""
    filter_type = _text(body, "filterType")
    if filter_type not in ACCOUNT_FILTERS:
        raise InvalidRequest(f"filterType must be one of {', '.join(ACCOUNT_FILTERS)}",
                             field="filterType")
    value = _text(body, "filterValue")
    if filter_type in ("EMAIL", "PHONE_NUMBER") and config["verificationTokenRequiredForGetAccountPii"]:
        token = _text(body, "verificationToken", required=False)
        if not token:
            raise PermissionDenied("this auth proxy looks accounts up by email or phone number "
                                   "only with the verificationToken of a code sent to it")
        if verified_claims(upstream.token_keys, token).contact.lower() != str(value).strip().lower():
            raise PermissionDenied("the verificationToken was issued for another contact")
    ids = upstream.query(config, "list_suborgs",
                         {"filterType": filter_type, "filterValue": value}).get("organizationIds")
    return {"organizationId": ids[0]} if ids else {}


# -- wallet kit ----------------------------------------------------------------------------
def wallet_kit_config(upstream: Upstream, config: Config, body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/wallet_kit_config``: what a wallet kit shows (empty body accepted)."""
    kit = config["walletKitSettings"] or {}
    answer: dict[str, Any] = {
        "enabledProviders": enabled_providers(config.data),
        "sessionExpirationSeconds": str(config["sessionExpirationSeconds"]),
        "organizationId": config.organization_id,
        "otpLength": str(config["otpLength"]),
        "otpAlphanumeric": bool(config["otpAlphanumeric"]),
        "oauthClientIds": dict(kit.get("oauthClientIds") or {}),
    }
    if kit.get("oauthRedirectUrl"):
        answer["oauthRedirectUrl"] = kit["oauthRedirectUrl"]
    return answer


def wallet_kit_client_params(upstream: Upstream, config: Config,
                             body: dict[str, Any]) -> dict[str, Any]:
    """``/v1/wallet_kit_client_params``: no captcha provider is configured (empty answer)."""
    return {}


ROUTES: dict[str, Handler] = {
    "signup": signup, "signup_v2": signup_v2,
    "otp_init": otp_init, "otp_init_v2": otp_init_v2,
    "otp_verify": otp_verify, "otp_verify_v2": otp_verify_v2,
    "otp_login": otp_login, "otp_login_v2": otp_login_v2,
    "oauth2_authenticate": oauth2_authenticate, "oauth_login": oauth_login,
    "account": account, "wallet_kit_config": wallet_kit_config,
    "wallet_kit_client_params": wallet_kit_client_params,
}
#: Paths whose body may be empty.
EMPTY_BODY = frozenset({"wallet_kit_config", "wallet_kit_client_params"})
#: Paths that start an OTP (limited per contact too).
OTP_INITIATIONS = frozenset({"otp_init", "otp_init_v2"})
