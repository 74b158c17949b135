"""OIDC ID-token verification against a real provider on loopback (discovery, JWKS, rotation).

Every refusal is an ``InvalidOidcToken`` (400, ``INVALID_OIDC_TOKEN``) naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from infra.sessions.egress import Egress
from infra.sessions.oidc import (
    REFETCH_INTERVAL_S,
    InvalidOidcToken,
    JwksCache,
    OidcVerifier,
    nonce_for,
)
from infra.webhooks.destinations import AllowList, UnsafeDestination
from tests.support.keys import make_key
from tests.support.oidc_provider import OidcProvider

LOOPBACK = Egress(AllowList.of(["127.0.0.0/8"]))


@pytest.fixture
def provider() -> Iterator[OidcProvider]:
    p = OidcProvider().start()
    yield p
    p.stop()


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def verifier(provider: OidcProvider, clock: Clock) -> OidcVerifier:
    v = OidcVerifier([provider.issuer], LOOPBACK)
    v.cache = JwksCache(LOOPBACK, clock=clock)
    return v


def test_a_good_token_verifies_and_binds_the_key(provider: OidcProvider, verifier: OidcVerifier) -> None:
    key = make_key()
    token = provider.id_token(sub="user-1", aud="app-1", nonce=nonce_for(key.public_key))
    identity = verifier.verify(token, public_key_hex=key.public_key)
    assert (identity.issuer, identity.subject, identity.audiences) == (provider.issuer, "user-1", ("app-1",))
    assert identity.audience_in({"other", "app-1"}) == "app-1"
    assert "GET /.well-known/openid-configuration" in provider.requests


def test_tknonce_binds_too(provider: OidcProvider, verifier: OidcVerifier) -> None:
    key = make_key()
    token = provider.id_token(sub="u", aud="a", tknonce=nonce_for(key.public_key))
    assert verifier.verify(token, public_key_hex=key.public_key).subject == "u"


@pytest.mark.parametrize(("case", "message"), [
    ("wrong nonce", "nonce does not bind"),
    ("no nonce", "nonce does not bind"),
    ("expired", "expired"),
    ("wrong issuer", "is not accepted"),
    ("bad signature", "signature does not verify"),
    ("unknown kid", "does not publish"),
    ("alg none", "algorithm"),
    ("hmac", "algorithm"),
    ("no sub", "'sub'"),
    ("not a jwt", "not a JWT"),
])
def test_bad_tokens_are_refused(provider: OidcProvider, verifier: OidcVerifier, case: str,
                                message: str) -> None:
    key = make_key()
    nonce = nonce_for(key.public_key)
    token = {
        "wrong nonce": lambda: provider.id_token(sub="u", aud="a", nonce=nonce_for(make_key().public_key)),
        "no nonce": lambda: provider.id_token(sub="u", aud="a"),
        "expired": lambda: provider.id_token(sub="u", aud="a", nonce=nonce, lifetime_s=-600),
        "wrong issuer": lambda: provider.id_token(sub="u", aud="a", nonce=nonce,
                                                  iss="https://evil.example"),
        "bad signature": lambda: provider.id_token(
            sub="u", aud="a", nonce=nonce,
            key=rsa.generate_private_key(public_exponent=65537, key_size=2048)),
        "unknown kid": lambda: provider.id_token(sub="u", aud="a", nonce=nonce, kid="nope"),
        "alg none": lambda: jwt.encode({"iss": provider.issuer, "sub": "u", "aud": "a",
                                        "exp": 2**40, "nonce": nonce}, None, algorithm="none"),
        "hmac": lambda: jwt.encode({"iss": provider.issuer, "sub": "u", "aud": "a",
                                    "exp": 2**40, "nonce": nonce}, "k" * 32, algorithm="HS256"),
        "no sub": lambda: _without_sub(provider, nonce),
        "not a jwt": lambda: "abc.def",
    }[case]()
    with pytest.raises(InvalidOidcToken, match=message) as caught:
        verifier.verify(token, public_key_hex=key.public_key)
    wire = caught.value.to_wire()
    assert wire["code"] == 3
    assert {"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
            "turnkeyErrorCode": "INVALID_OIDC_TOKEN"} in wire["details"]


def _without_sub(provider: OidcProvider, nonce: str) -> str:
    kid, key = provider.keys[-1]
    return jwt.encode({"iss": provider.issuer, "aud": "a", "exp": 2**40, "nonce": nonce}, key,
                      algorithm="RS256", headers={"kid": kid})


def test_an_unregistered_audience_is_refused(provider: OidcProvider, verifier: OidcVerifier) -> None:
    identity = verifier.verify(provider.id_token(sub="u", aud=["x", "y"]))
    with pytest.raises(InvalidOidcToken, match="not a client id this organization registered"):
        identity.audience_in({"app-1"})


def test_rotation_refetches_once_and_unknown_kids_cannot_flood(
        provider: OidcProvider, verifier: OidcVerifier, clock: Clock) -> None:
    verifier.verify(provider.id_token(sub="u", aud="a"))
    jwks_fetches = provider.requests.count("GET /jwks")
    assert jwks_fetches == 1
    # A flood of made-up kids right after a fetch asks the issuer nothing.
    for i in range(20):
        with pytest.raises(InvalidOidcToken):
            verifier.verify(provider.id_token(sub="u", aud="a", kid=f"made-up-{i}"))
    assert provider.requests.count("GET /jwks") == 1
    # The issuer rotates; once the refetch interval passed, the new kid is fetched once.
    provider.rotate()
    clock.t += REFETCH_INTERVAL_S
    assert verifier.verify(provider.id_token(sub="u2", aud="a")).subject == "u2"
    assert provider.requests.count("GET /jwks") == 2
    # Tokens of the old key still verify from the cache (both keys are published).
    old_kid, old_key = provider.keys[0]
    assert verifier.verify(provider.id_token(sub="u3", aud="a", kid=old_kid, key=old_key)).subject == "u3"
    assert provider.requests.count("GET /jwks") == 2


def test_cached_keys_outlive_an_unreachable_issuer(provider: OidcProvider, verifier: OidcVerifier,
                                                    clock: Clock) -> None:
    token = provider.id_token(sub="u", aud="a")
    verifier.verify(token)
    provider.stop()
    clock.t += 10 * 3600  # stale: a refetch is tried, fails, the cached key still verifies
    assert verifier.verify(token).subject == "u"


def test_issuers_on_private_addresses_need_the_allow_list(provider: OidcProvider) -> None:
    strict = OidcVerifier([provider.issuer], Egress())
    with pytest.raises(UnsafeDestination, match="WALLETD_OIDC_ALLOW"):
        strict.verify(provider.id_token(sub="u", aud="a"))
    assert provider.requests == []


def test_issuer_spellings() -> None:
    from infra.sessions.oidc import issuer_forms

    assert issuer_forms("accounts.google.com") == ("accounts.google.com",
                                                   "https://accounts.google.com")
    assert issuer_forms("https://accounts.google.com") == ("https://accounts.google.com",
                                                           "accounts.google.com")
    assert issuer_forms("http://127.0.0.1:5") == ("http://127.0.0.1:5",)


def test_google_style_bare_issuer_matches_its_https_form() -> None:
    verifier = OidcVerifier(["https://accounts.google.com"], Egress())
    assert verifier._configured("accounts.google.com") == "https://accounts.google.com"
    assert verifier._configured("https://accounts.google.com/") == "https://accounts.google.com"
    assert verifier._configured("https://accounts.google.com.evil") is None


def test_discovery_served_with_a_trailing_slash_only(provider: OidcProvider,
                                                     verifier: OidcVerifier) -> None:
    provider.discovery_with_slash = True
    assert verifier.verify(provider.id_token(sub="u", aud="a")).subject == "u"
    assert provider.requests[:2] == ["GET /.well-known/openid-configuration",
                                     "GET /.well-known/openid-configuration/"]
