"""Pre-account takeover and lockout (issue 19 items 1 and 2), tried through the auth proxy.

An attacker signs up a sub-organization of their own and attaches somebody else's phone
number, OIDC identity, wallet key or email to it without proof. Each attempt may store the
value, but none may make the victim's first login or account lookup land in the attacker's
sub-organization, nor lock the victim out; the victim's honest sign-up and login still work.
"""

from __future__ import annotations

from infra.sessions.oidc import nonce_for
from tests.e2e.abuse.conftest import (
    CLIENT_ID,
    World,
    account,
    as_user,
    email_token,
    otp_login,
    session_claims,
    signed_up,
    signup,
    sms_token,
    wallet_login,
)
from tests.e2e.auth_proxy.conftest import Tenant
from tests.support.auth_proxy import token_claims
from tests.support.keys import make_key


def test_a_sign_up_token_proves_only_its_own_contact(world: World, tenant: Tenant) -> None:
    attacker, attacker_key = make_key(), make_key()
    victim_phone = "+15550001001"
    token = email_token(world, tenant, "mallory-phone@example.com", attacker)
    # The attacker's own email is proven; the victim's phone rides along unproven.
    attacker_org, _ = signed_up(signup(world, tenant, token=token, client=attacker,
                                       email="mallory-phone@example.com", phone=victim_phone,
                                       api_keys=[attacker_key.api_key_params("mallory")]))
    assert account(world, tenant, "EMAIL", "mallory-phone@example.com") == {
        "organizationId": attacker_org}
    assert account(world, tenant, "PHONE_NUMBER", victim_phone) == {}

    # The victim logs in by SMS: nothing to find, so they sign up, and land in their own.
    victim = make_key()
    victim_token = sms_token(world, tenant, victim_phone, victim)
    victim_org, victim_user = signed_up(signup(world, tenant, token=victim_token, client=victim,
                                               phone=victim_phone))
    assert victim_org != attacker_org
    assert account(world, tenant, "PHONE_NUMBER", victim_phone) == {"organizationId": victim_org}
    claims = session_claims(otp_login(world, tenant, victim_token, victim))
    assert (claims["organization_id"], claims["user_id"]) == (victim_org, victim_user)


def test_an_email_token_does_not_sign_up_another_email(world: World, tenant: Tenant) -> None:
    attacker = make_key()
    token = email_token(world, tenant, "mallory-email@example.com", attacker)
    refused = signup(world, tenant, token=token, client=attacker, email="alice-email@example.com")
    assert refused.status_code == 401, refused.text
    assert account(world, tenant, "EMAIL", "alice-email@example.com") == {}


def test_bare_oidc_claims_bind_nobody(world: World, tenant: Tenant) -> None:
    issuer = world.provider.issuer
    attacker_key = make_key()
    # The attacker claims the victim's Google identity without an ID token.
    attacker_org, _ = signed_up(signup(world, tenant, api_keys=[
        attacker_key.api_key_params("mallory")], oauth_providers=[{
            "providerName": "google", "oidcClaims": {"iss": issuer, "sub": "alice-sub",
                                                     "aud": CLIENT_ID}}]))
    session_key = make_key()
    token = world.provider.id_token(sub="alice-sub", aud=CLIENT_ID,
                                    nonce=nonce_for(session_key.public_key))
    assert account(world, tenant, "OIDC_TOKEN", token) == {}
    login = world.call(tenant, "oauth_login", {"oidcToken": token,
                                               "publicKey": session_key.public_key})
    assert login.status_code == 404, login.text

    # signUpWithOauth: the token binds the identity, then logs in once.
    victim_org, victim_user = signed_up(signup(world, tenant, oauth_providers=[
        {"providerName": "google", "oidcToken": token}]))
    assert victim_org != attacker_org
    assert account(world, tenant, "OIDC_TOKEN", token) == {"organizationId": victim_org}
    claims = session_claims(world.call(tenant, "oauth_login", {
        "oidcToken": token, "publicKey": session_key.public_key}))
    assert (claims["organization_id"], claims["user_id"]) == (victim_org, victim_user)


def test_a_forged_oidc_token_does_not_sign_up(world: World, tenant: Tenant) -> None:
    from cryptography.hazmat.primitives.asymmetric import rsa

    forged = world.provider.id_token(sub="alice-forged", aud=CLIENT_ID, key=rsa.generate_private_key(
        public_exponent=65537, key_size=2048))
    refused = signup(world, tenant, oauth_providers=[{"providerName": "google",
                                                      "oidcToken": forged}])
    assert refused.status_code in (400, 401), refused.text


def test_a_sub_organization_cannot_add_an_oidc_audience(world: World, tenant: Tenant) -> None:
    """A tenant registering a provider with its own ``aud`` does not make the parent accept
    ID tokens issued to that client."""
    attacker_key = make_key()
    attacker_org, attacker_user = signed_up(signup(world, tenant, api_keys=[
        attacker_key.api_key_params("mallory")]))
    as_user(world, attacker_org, attacker_key).ok(
        "create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2", {
            "userId": attacker_user, "oauthProviders": [{"providerName": "other", "oidcClaims": {
                "iss": world.provider.issuer, "sub": "mallory-sub", "aud": "other-app"}}]})
    session_key = make_key()
    token = world.provider.id_token(sub="mallory-sub", aud="other-app",
                                    nonce=nonce_for(session_key.public_key))
    login = world.call(tenant, "oauth_login", {"oidcToken": token,
                                               "publicKey": session_key.public_key})
    assert login.status_code in (400, 401, 404), login.text
    assert "session" not in login.json()


def test_a_wallet_key_is_neither_captured_nor_locked_out(world: World, tenant: Tenant) -> None:
    wallet = make_key("API_KEY_CURVE_SECP256K1")
    attacker_key = make_key()
    # The attacker's sub-organization holds the victim's wallet key beside its own key.
    attacker_org, _ = signed_up(signup(world, tenant, api_keys=[
        wallet.api_key_params("wallet-auth:victim"), attacker_key.api_key_params("mallory")]))
    assert account(world, tenant, "PUBLIC_KEY", wallet.public_key) == {}
    refused = wallet_login(world, tenant, wallet)
    assert refused.status_code in (401, 404), refused.text

    # loginOrSignupWithWallet: nothing found, so the wallet signs up, then logs in.
    victim_org, victim_user = signed_up(signup(world, tenant, api_keys=[
        wallet.api_key_params(f"wallet-auth:{wallet.public_key}")]))
    assert account(world, tenant, "PUBLIC_KEY", wallet.public_key) == {
        "organizationId": victim_org}
    login = wallet_login(world, tenant, wallet)
    assert login.status_code == 200, login.text
    activity = login.json()["activity"]
    assert activity["organizationId"] == victim_org
    claims = token_claims(activity["result"]["stampLoginResult"]["session"])
    assert (claims["organization_id"], claims["user_id"]) == (victim_org, victim_user)

    # A later sign-up holding only the same key cannot take the login over (first wins).
    later_org, _ = signed_up(signup(world, tenant, api_keys=[
        wallet.api_key_params("wallet-auth:copy")]))
    assert later_org not in (victim_org, attacker_org)
    again = wallet_login(world, tenant, wallet)
    assert again.status_code == 200, again.text
    assert again.json()["activity"]["organizationId"] == victim_org


def test_update_user_email_needs_a_token_for_the_new_address(world: World,
                                                              tenant: Tenant) -> None:
    attacker, attacker_key = make_key(), make_key()
    token = email_token(world, tenant, "mallory-update@example.com", attacker)
    attacker_org, attacker_user = signed_up(signup(
        world, tenant, token=token, client=attacker, email="mallory-update@example.com",
        api_keys=[attacker_key.api_key_params("mallory")]))
    api = as_user(world, attacker_org, attacker_key)
    # Without a token the victim's address is stored but finds nobody.
    api.ok("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", {
        "userId": attacker_user, "userEmail": "alice-update@example.com"})
    assert account(world, tenant, "EMAIL", "alice-update@example.com") == {}
    assert account(world, tenant, "EMAIL", "mallory-update@example.com") == {}
    # A token for another address is refused.
    other = email_token(world, tenant, "mallory-other@example.com", attacker)
    refused = api.submit("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", {
        "userId": attacker_user, "userEmail": "alice-update2@example.com",
        "verificationToken": other})
    assert refused.status_code == 401, refused.text
    assert "another contact" in refused.json()["message"]
    # update_user (no token field) stores the address unverified too.
    api.ok("update_user", "ACTIVITY_TYPE_UPDATE_USER", {
        "userId": attacker_user, "userEmail": "alice-update3@example.com"})
    assert account(world, tenant, "EMAIL", "alice-update3@example.com") == {}
    # The token of the new address proves it.
    fresh = email_token(world, tenant, "mallory-new@example.com", attacker)
    api.ok("update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL", {
        "userId": attacker_user, "userEmail": "mallory-new@example.com",
        "verificationToken": fresh})
    assert account(world, tenant, "EMAIL", "mallory-new@example.com") == {
        "organizationId": attacker_org}


def test_update_user_phone_number_needs_a_token_for_the_new_number(world: World,
                                                                    tenant: Tenant) -> None:
    attacker_key = make_key()
    attacker_org, attacker_user = signed_up(signup(world, tenant, api_keys=[
        attacker_key.api_key_params("mallory")]))
    api = as_user(world, attacker_org, attacker_key)
    api.ok("update_user_phone_number", "ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER", {
        "userId": attacker_user, "userPhoneNumber": "+15550001077"})
    assert account(world, tenant, "PHONE_NUMBER", "+15550001077") == {}
    victim = make_key()
    victim_token = sms_token(world, tenant, "+15550001077", victim)
    # The victim's token does not log in to the attacker's copy: nothing is found.
    refused = otp_login(world, tenant, victim_token, victim)
    assert refused.status_code == 404, refused.text


def test_list_suborgs_follows_the_login_rule_through_the_official_client(
        world: World, tenant: Tenant) -> None:
    """``list_suborgs`` with an identity filter answers the one sub-organization a login lands
    in: the proven holder, not the copies (turnkey-http, the official Python client)."""
    from turnkey_sdk_types import GetSubOrgIdsBody

    email = "listed@example.com"
    copy_key = make_key()
    holder = make_key()
    token = email_token(world, tenant, email, holder)
    holder_org, _ = signed_up(signup(world, tenant, token=token, client=holder, email=email))
    # A tenant copies the address onto its own user afterwards (stored, unproven).
    copy_org, copy_user = signed_up(signup(world, tenant, api_keys=[
        copy_key.api_key_params("copy2")]))
    as_user(world, copy_org, copy_key).ok(
        "update_user_email", "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
        {"userId": copy_user, "userEmail": email})
    client = world.dep.client(tenant.api.stamper)
    found = client.get_sub_org_ids(GetSubOrgIdsBody(filterType="EMAIL", filterValue=email))
    assert found.organizationIds == [holder_org]


def test_list_verified_suborgs_lists_only_proven_holders(world: World, tenant: Tenant) -> None:
    """``list_verified_suborgs`` (the tenant's own credential) follows the same rule: an
    unproven copy of a phone number is not listed; the holder that proved it is."""
    attacker = make_key()
    victim_phone = "+15550001077"
    token = email_token(world, tenant, "mallory-verified@example.com", attacker)
    attacker_org, _ = signed_up(signup(world, tenant, token=token, client=attacker,
                                       email="mallory-verified@example.com", phone=victim_phone))

    def listed(filter_type: str, value: str) -> list[str]:
        return list(tenant.api.read("list_verified_suborgs", {
            "filterType": filter_type, "filterValue": value})["organizationIds"])

    assert listed("PHONE_NUMBER", victim_phone) == []
    assert listed("EMAIL", "mallory-verified@example.com") == [attacker_org]
    victim = make_key()
    victim_org, _ = signed_up(signup(world, tenant, token=sms_token(world, tenant, victim_phone,
                                                                    victim),
                                     client=victim, phone=victim_phone))
    assert listed("PHONE_NUMBER", victim_phone) == [victim_org]
    everyone = tenant.api.read("list_verified_suborgs", {})["organizationIds"]
    assert {attacker_org, victim_org} <= set(everyone)
    bad = tenant.api.query("list_verified_suborgs", {"filterType": "NAME", "filterValue": "x"})
    assert bad.status_code == 400, bad.text
