"""Issue 19 item 7, tokens and passkeys: a verification token bound to no key is readable by
its submitter only and cannot be spent by a parent organization; a passkey's signature
counter never goes backwards."""

from __future__ import annotations

from tests.e2e.abuse.conftest import World, as_user, email_token, signed_up, signup
from tests.e2e.auth_proxy.conftest import Tenant
from tests.support.keys import make_key
from tests.support.mailboxes import code_in, text_part
from tests.support.raw_api import RawApi, create_sub_org, root_user_params
from tests.support.soft_authenticator import SoftAuthenticator


def test_an_unbound_token_is_neither_readable_nor_spendable_by_a_parent(
        world: World, tenant: Tenant) -> None:
    email, client, key = "unbound@example.com", make_key(), make_key()
    token = email_token(world, tenant, email, client)
    sub_org, _ = signed_up(signup(world, tenant, token=token, client=client, email=email,
                                  api_keys=[key.api_key_params("own")]))
    own = as_user(world, sub_org, key)
    otp_id = own.ok("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3", {
        "otpType": "OTP_TYPE_EMAIL", "contact": email, "appName": "Mine"})["otpId"]
    code = code_in(text_part(world.proxied.mailbox.last_to(email)))
    # verify_otp V1 without publicKey: a token that works for whoever holds it.
    submitted = own.submit("verify_otp", "ACTIVITY_TYPE_VERIFY_OTP",
                           {"otpId": otp_id, "otpCode": code})
    assert submitted.status_code == 200, submitted.text
    activity = submitted.json()["activity"]
    unbound = activity["result"]["verifyOtpResult"]["verificationToken"]
    assert unbound.count(".") == 2

    # The parent reads the sub-organization's activity but not the token.
    parent = tenant.api
    seen = parent.read("get_activity", {"activityId": activity["id"]}, organization_id=sub_org)
    assert seen["activity"]["result"]["verifyOtpResult"]["verificationToken"] != unbound
    # Nor can it spend the token it could have read (acting in the sub-organization).
    refused = parent.submit("otp_login", "ACTIVITY_TYPE_OTP_LOGIN", {
        "verificationToken": unbound, "publicKey": make_key().public_key},
        organization_id=sub_org)
    assert refused.status_code == 401, refused.text
    assert "bound to no client key" in refused.json()["message"]
    # Its submitter reads it and spends it.
    assert own.read("get_activity", {"activityId": activity["id"]})["activity"]["result"][
        "verifyOtpResult"]["verificationToken"] == unbound
    login = own.submit("otp_login", "ACTIVITY_TYPE_OTP_LOGIN", {
        "verificationToken": unbound, "publicKey": make_key().public_key})
    assert login.status_code == 200, login.text


def test_a_passkey_counter_that_goes_backwards_is_refused(world: World, tenant: Tenant) -> None:
    passkey = SoftAuthenticator()
    root = tenant.api
    user_id = root.stamper.user_id  # type: ignore[union-attr]
    root.ok("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        "userId": user_id, "authenticators": [passkey.registration("counted")]})
    as_passkey = RawApi(world.dep, passkey, root.organization_id)
    assert as_passkey.read("whoami")["userId"] == user_id
    assert as_passkey.read("whoami")["userId"] == user_id
    # A clone of the credential signs with an older counter.
    passkey.sign_count = 0
    cloned = as_passkey.query("whoami")
    assert cloned.status_code == 401, cloned.text
    assert "counter" in cloned.json()["message"]
    passkey.sign_count = 10
    assert as_passkey.read("whoami")["userId"] == user_id


def test_a_copied_passkey_neither_captures_nor_blocks_the_first(world: World,
                                                                tenant: Tenant) -> None:
    passkey = SoftAuthenticator()
    registration = passkey.registration("mine")
    root = tenant.api
    first, second = (create_sub_org(root, name, users=[root_user_params(
        f"{name} root", authenticators=[registration])])[0] for name in ("first", "copy"))
    as_passkey = RawApi(world.dep, passkey, root.organization_id)
    # whoami addressed to the parent resolves downwards to the first registration.
    assert as_passkey.read("whoami")["organizationId"] == first
    assert second != first
