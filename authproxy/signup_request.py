"""The sign-up body (``v1SignupRequest`` / ``v1SignupV2Request``) and what it must prove.

The models follow the auth proxy swagger (``reference/auth_proxy.swagger.json``): its types
are checked strictly (a ``userTag`` array where the schema says string is a 400, not a
string), its required fields are required (``apiKeys``, ``authenticators`` and
``oauthProviders`` are always sent by ``@turnkey/core``, empty when unused), and fields it
does not know are ignored, as the proto3 JSON mapping behind Turnkey's gateway does. A
``null`` is read as "absent" (proto3 JSON again; the Rust client sends ``null`` for unset
optionals), so a ``null`` required field is missing.

Beyond the schema, a sign-up creates a sub-organization only for a user someone can reach:
:func:`require_a_way_in` refuses a body whose user would hold no credential (API key,
passkey, OAuth provider bound by an ``oidcToken``) and no proven contact (the
``verificationToken`` of a code verified for its email or phone number). Without it anyone
could mint empty tenants, bounded only by the per-address rate limit.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from infra.errors import InvalidRequest

ApiKeyCurve = Literal["API_KEY_CURVE_P256", "API_KEY_CURVE_SECP256K1", "API_KEY_CURVE_ED25519"]
Transport = Literal[
    "AUTHENTICATOR_TRANSPORT_BLE", "AUTHENTICATOR_TRANSPORT_INTERNAL", "AUTHENTICATOR_TRANSPORT_NFC",
    "AUTHENTICATOR_TRANSPORT_USB", "AUTHENTICATOR_TRANSPORT_HYBRID",
]


class _Body(BaseModel):
    """A swagger object: camelCase names, strict JSON types, unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore",
                              strict=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    def wire(self) -> dict[str, Any]:
        """The JSON form forwarded to the API (swagger names, absent fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class ApiKey(_Body):
    """``v1ApiKeyParamsV2``."""

    api_key_name: str
    public_key: str
    curve_type: ApiKeyCurve
    expiration_seconds: str | None = None


class Attestation(_Body):
    """``v1Attestation``."""

    credential_id: str
    client_data_json: str
    attestation_object: str
    transports: list[Transport]


class Authenticator(_Body):
    """``v1AuthenticatorParamsV2``."""

    authenticator_name: str
    challenge: str
    attestation: Attestation


class OidcClaims(_Body):
    """``v1OidcClaims``."""

    iss: str
    sub: str
    aud: str


class OauthProvider(_Body):
    """``v1OauthProviderParamsV2`` (``v1OauthProviderParams`` requires the token)."""

    provider_name: str
    oidc_token: str | None = None
    oidc_claims: OidcClaims | None = None


class OauthProviderV1(OauthProvider):
    """``v1OauthProviderParams``: ``/v1/signup`` takes providers by token only."""

    oidc_token: str


class WalletAccount(_Body):
    """``v1WalletAccountParams`` (enums are the API's to judge; they are many and grow)."""

    curve: str
    path_format: str
    path: str
    address_format: str
    name: str | None = None


class Wallet(_Body):
    """``v1WalletParams``."""

    wallet_name: str
    accounts: list[WalletAccount]
    mnemonic_length: int | None = None


class ClientSignature(_Body):
    """``v1ClientSignature``."""

    public_key: str
    scheme: Literal["CLIENT_SIGNATURE_SCHEME_API_P256"]
    message: str
    signature: str


class SignupV2(_Body):
    """``v1SignupV2Request``: ``/v1/signup_v2``."""

    user_email: str | None = None
    user_phone_number: str | None = None
    user_tag: str | None = None
    user_name: str | None = None
    organization_name: str | None = None
    verification_token: str | None = None
    api_keys: list[ApiKey]
    authenticators: list[Authenticator]
    oauth_providers: list[OauthProvider]
    wallet: Wallet | None = None
    client_signature: ClientSignature | None = None


class Signup(SignupV2):
    """``v1SignupRequest``: ``/v1/signup`` (OAuth providers by ``oidcToken`` only)."""

    oauth_providers: list[OauthProviderV1]  # type: ignore[assignment]


def parse_signup(body: dict[str, Any], *, v2: bool) -> SignupV2:
    """``body`` as the swagger's sign-up request, or a 400 naming every field that is not.

    Raises:
        InvalidRequest: a field of the wrong type, a required field missing.
    """
    model, schema = (SignupV2, "v1SignupV2Request") if v2 else (Signup, "v1SignupRequest")
    try:
        return model.model_validate(body)
    except ValidationError as ex:
        violations = [{"field": ".".join(str(p) for p in err["loc"]) or "body",
                       "description": err["msg"]} for err in ex.errors()]
        first = violations[0]
        raise InvalidRequest(
            f"the sign-up body does not match the auth proxy schema ({schema}): "
            f"{first['field']}: {first['description']}",
            details=[{"@type": "type.googleapis.com/google.rpc.BadRequest",
                      "fieldViolations": violations}]) from None


def require_a_way_in(signup: SignupV2) -> None:
    """Refuse a sign-up whose user would hold no credential and no proven contact.

    A credential is an API key, a passkey, or an OAuth provider bound by an ``oidcToken``
    (the API verifies it: signature, issuer, audience); bare ``oidcClaims`` prove nothing.
    A proven contact is the email or phone number a ``verificationToken`` was issued for
    (checked with its client signature before anything is forwarded).

    Raises:
        InvalidRequest: neither, or a token without the contact it proves.
    """
    if signup.verification_token and not (signup.user_email or signup.user_phone_number):
        raise InvalidRequest(
            "a verificationToken proves an email or phone number: send the userEmail or "
            "userPhoneNumber it was issued for", field="verificationToken")
    if (signup.api_keys or signup.authenticators or signup.verification_token
            or any(p.oidc_token for p in signup.oauth_providers)):
        return
    raise InvalidRequest(
        "a sign-up must give its user a way in: at least one API key, passkey (authenticators) "
        "or OAuth provider with an oidcToken, or the verificationToken of a code verified for "
        "its email or phone number; nothing was created", field="apiKeys")
