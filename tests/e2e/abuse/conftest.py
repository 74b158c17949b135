"""One ``walletd up`` with its auth proxy, a loopback SMTP server and SMS API, and a loopback
OIDC provider: the world the abuse suite attacks. Each test makes its own tenant (a
top-level organization with the proxy enabled) so tests do not share identities."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import requests

from tests.e2e.auth_proxy.conftest import Proxied, Tenant, new_tenant, start
from tests.support.auth_proxy import client_signature, token_claims
from tests.support.keys import TestKey, make_key
from tests.support.mailboxes import code_in, text_part
from tests.support.oidc_provider import OidcProvider
from tests.support.raw_api import RawApi, envelope

APP = "https://app.example.com"
#: The OAuth client id the tenant's wallet kit registers (an audience it accepts).
CLIENT_ID = "app-client-id"
METHODS = ["email", "sms", "passkey", "wallet", "google"]


@dataclass
class World:
    proxied: Proxied
    provider: OidcProvider

    @property
    def dep(self) -> Any:
        return self.proxied.dep

    def call(self, tenant: Tenant, name: str, body: dict[str, Any]) -> requests.Response:
        return self.proxied.call(name, body, tenant.config_id, origin=APP)


@pytest.fixture(scope="package")
def provider() -> Iterator[OidcProvider]:
    p = OidcProvider(clients={}).start()
    yield p
    p.stop()


@pytest.fixture(scope="package")
def world(tmp_path_factory: pytest.TempPathFactory, provider: OidcProvider) -> Iterator[World]:
    with start(tmp_path_factory.mktemp("abuse"), WALLETD_OIDC_ISSUERS=provider.issuer,
               WALLETD_OIDC_ALLOW="127.0.0.0/8") as proxied:
        yield World(proxied, provider)


@pytest.fixture
def tenant(world: World) -> Tenant:
    return new_tenant(world.dep, allowedOrigins=[APP], allowedAuthMethods=METHODS,
                      walletKitSettings={"oauthClientIds": {"google": CLIENT_ID}})


# --- what a browser does through the proxy -------------------------------------------------


def email_token(world: World, tenant: Tenant, email: str, client: TestKey) -> str:
    """otp_init + otp_verify for ``email``: a verification token bound to ``client``."""
    init = world.call(tenant, "otp_init", {"otpType": "OTP_TYPE_EMAIL", "contact": email})
    assert init.status_code == 200, init.text
    code = code_in(text_part(world.proxied.mailbox.last_to(email)))
    verified = world.call(tenant, "otp_verify", {"otpId": init.json()["otpId"], "otpCode": code,
                                                 "publicKey": client.public_key})
    assert verified.status_code == 200, verified.text
    return str(verified.json()["verificationToken"])


def sms_token(world: World, tenant: Tenant, phone: str, client: TestKey) -> str:
    init = world.call(tenant, "otp_init", {"otpType": "OTP_TYPE_SMS", "contact": phone})
    assert init.status_code == 200, init.text
    code = world.proxied.sms.last_to(phone)["Body"].rsplit(" ", 1)[1]
    verified = world.call(tenant, "otp_verify", {"otpId": init.json()["otpId"], "otpCode": code,
                                                 "publicKey": client.public_key})
    assert verified.status_code == 200, verified.text
    return str(verified.json()["verificationToken"])


def signup(world: World, tenant: Tenant, *, token: str | None = None,
           client: TestKey | None = None, email: str | None = None, phone: str | None = None,
           api_keys: list[dict[str, Any]] | None = None,
           oauth_providers: list[dict[str, Any]] | None = None) -> requests.Response:
    """``/v1/signup_v2`` as ``@turnkey/core`` sends it (client signature when a token)."""
    body: dict[str, Any] = {"apiKeys": api_keys or [], "authenticators": [],
                            "oauthProviders": oauth_providers or []}
    usage: dict[str, Any] = {"apiKeys": body["apiKeys"]}
    if email:
        body["userEmail"], usage["email"] = email, email
    if phone:
        body["userPhoneNumber"], usage["phoneNumber"] = phone, phone
    if token:
        assert client is not None
        body["verificationToken"] = token
        body["clientSignature"] = client_signature(client, {
            "signupV2": usage, "tokenId": token_claims(token)["id"], "type": "USAGE_TYPE_SIGNUP"})
    return world.call(tenant, "signup_v2", body)


def account(world: World, tenant: Tenant, filter_type: str, value: str) -> dict[str, Any]:
    found = world.call(tenant, "account", {"filterType": filter_type, "filterValue": value})
    assert found.status_code == 200, found.text
    return found.json()  # type: ignore[no-any-return]


def otp_login(world: World, tenant: Tenant, token: str, client: TestKey) -> requests.Response:
    session_key = make_key()
    message = {"login": {"publicKey": session_key.public_key},
               "tokenId": token_claims(token)["id"], "type": "USAGE_TYPE_LOGIN"}
    return world.call(tenant, "otp_login", {"verificationToken": token,
                                            "publicKey": session_key.public_key,
                                            "clientSignature": client_signature(client, message)})


def session_claims(response: requests.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return token_claims(response.json()["session"])


def wallet_login(world: World, tenant: Tenant, wallet: TestKey) -> requests.Response:
    """``@turnkey/core`` loginWithWallet: stamp_login to the parent, stamped by the wallet key."""
    parent = tenant.api.organization_id
    body = envelope("ACTIVITY_TYPE_STAMP_LOGIN", parent,
                    {"publicKey": make_key().public_key, "expirationSeconds": "900"})
    return world.dep.post("/public/v1/submit/stamp_login", body, {
        "Content-Type": "application/json", "X-Stamp": wallet.stamp(body)})


def as_user(world: World, organization_id: str, key: TestKey) -> RawApi:
    """Requests stamped by ``key`` in ``organization_id``."""
    return RawApi(world.dep, key, organization_id)


def signed_up(response: requests.Response) -> tuple[str, str]:
    assert response.status_code == 200, response.text
    return response.json()["organizationId"], response.json()["userId"]
