"""OIDC claim extraction and passkey vote keys (infra.identity.directory, infra.identity.passkeys)."""

from __future__ import annotations

import base64
import json

import pytest

from infra.errors import InvalidRequest
from infra.identity.directory import oidc_claims_unverified, provider_identity
from infra.identity.passkeys import vote_public_key


def _jwt(claims: object) -> str:
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    return f"eyJhbGciOiJSUzI1NiJ9.{payload}.sig"


def test_claims_come_from_the_token_payload() -> None:
    token = _jwt({"iss": "https://i.example", "sub": "s", "aud": ["a", "b"]})
    assert oidc_claims_unverified(token)["sub"] == "s"
    assert provider_identity({"providerName": "p", "oidcToken": token}, "f") == (
        "p", "https://i.example", "a", "s")


def test_explicit_claims_win() -> None:
    params = {"providerName": "p", "oidcToken": "x.y.z",
              "oidcClaims": {"iss": "i", "sub": "s", "aud": "a"}}
    assert provider_identity(params, "f") == ("p", "i", "a", "s")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"oidcToken": "a.b.c"}, "providerName is required"),
        ({"providerName": "p"}, "send oidcClaims"),
        ({"providerName": "p", "oidcToken": "abc"}, "not a JWT"),
        ({"providerName": "p", "oidcToken": _jwt([1])}, "not a JWT"),
        ({"providerName": "p", "oidcClaims": {"iss": "i", "sub": "", "aud": "a"}},
         "non-empty iss, sub and aud"),
    ],
)
def test_unusable_provider_params_are_400s(params: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidRequest, match=message):
        provider_identity(params, "oauthProviders[0]")


def test_vote_public_key_fits_the_vote_column() -> None:
    assert vote_public_key("pQECAyYg") == "pQECAyYg"
    long_key = "x" * 400
    digest = vote_public_key(long_key)
    assert digest.startswith("sha256:") and len(digest) == 71
