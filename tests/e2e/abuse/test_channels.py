"""The operator's mail and SMS as a weapon (issue 19 item 3), tried by a self-signed-up
sub-organization against the API: foreign senders, several recipients, its own templates,
markup in the branding, switches its parent turned off, and floods of codes. Each is
refused with a 400 (429 for the flood) before anything is sent; an honest code with the
sub-organization's app name and logo still goes out, from the operator's sender."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.abuse.conftest import World, as_user, signed_up, signup
from tests.e2e.auth_proxy.conftest import Tenant, completed
from tests.support.keys import make_key
from tests.support.raw_api import RawApi

INIT_OTP = "ACTIVITY_TYPE_INIT_OTP_V3"


def _tenant_user(world: World, tenant: Tenant) -> tuple[RawApi, str]:
    key = make_key()
    org, user = signed_up(signup(world, tenant, api_keys=[key.api_key_params("mallory")]))
    return as_user(world, org, key), user


def _init_otp(api: RawApi, contact: str, otp_type: str = "OTP_TYPE_EMAIL",
              **extra: Any) -> Any:
    return api.submit("init_otp", INIT_OTP, {"otpType": otp_type, "contact": contact,
                                             "appName": "Mallory", **extra})


@pytest.mark.parametrize(("extra", "field"), [
    ({"sendFromEmailAddress": "security@wallet.example"}, "sendFromEmailAddress"),
    ({"sendFromEmailSenderName": "Wallet Security Team"}, "sendFromEmailSenderName"),
    ({"replyToEmailAddress": "mallory@evil.example"}, "replyToEmailAddress"),
    ({"emailCustomization": {"templateId": "operator-welcome"}}, "templateId"),
    ({"emailCustomization": {"magicLinkTemplate": "https://evil.example/%s"}},
     "magicLinkTemplate"),
    ({"emailCustomization": {"templateVariables": "{\"subject\": \"Urgent\"}"}},
     "templateVariables"),
    ({"appName": "<b>Wallet Security</b>"}, "appName"),
    ({"appName": "Visit https://evil.example now"}, "appName"),
    ({"appName": "W" * 65}, "appName"),
    ({"emailCustomization": {"logoUrl": "http://evil.example/logo.png"}}, "logoUrl"),
    ({"emailCustomization": {"logoUrl": "javascript:alert(1)"}}, "logoUrl"),
])
def test_a_sub_organization_cannot_choose_what_the_operator_sends(
        world: World, tenant: Tenant, extra: dict[str, Any], field: str) -> None:
    api, _ = _tenant_user(world, tenant)
    contact = f"target-{field.lower()}@example.com"
    refused = _init_otp(api, contact, **extra)
    assert refused.status_code == 400, refused.text
    assert field in refused.text
    with pytest.raises(AssertionError):
        world.proxied.mailbox.last_to(contact, timeout=0.5)


def test_an_sms_template_is_the_operators(world: World, tenant: Tenant) -> None:
    api, _ = _tenant_user(world, tenant)
    refused = _init_otp(api, "+15550002001", "OTP_TYPE_SMS", smsCustomization={
        "template": "Your bank account is locked, call +1555 now {{.OtpCode}}"})
    assert refused.status_code == 400, refused.text
    assert "smsCustomization.template" in refused.json()["message"]


@pytest.mark.parametrize("contact", ["a@example.com, b@example.com", "a@example.com;b@example.com",
                                     "Alice <a@example.com>", "a@example.com\nBcc: b@example.com"])
def test_one_recipient_per_code(world: World, tenant: Tenant, contact: str) -> None:
    api, _ = _tenant_user(world, tenant)
    refused = _init_otp(api, contact)
    assert refused.status_code == 400, refused.text
    assert "one email address" in refused.json()["message"]


def test_a_parents_off_switch_holds_for_its_sub_organizations(world: World,
                                                              tenant: Tenant) -> None:
    api, _ = _tenant_user(world, tenant)
    completed(tenant.api, "set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE",
              {"name": "FEATURE_NAME_SMS_AUTH", "value": "false"})
    refused = _init_otp(api, "+15550002002", "OTP_TYPE_SMS")
    assert refused.status_code == 403, refused.text
    assert "FEATURE_NAME_SMS_AUTH" in refused.json()["message"]
    assert not [m for m in world.proxied.sms.received if m.get("To") == "+15550002002"]


def test_codes_are_limited_per_contact_across_organizations(world: World,
                                                            tenant: Tenant) -> None:
    contact = "flooded@example.com"
    first, _ = _tenant_user(world, tenant)
    second, _ = _tenant_user(world, tenant)
    for api in (first, first, first, second, second):
        sent = _init_otp(api, contact)
        assert sent.status_code == 200, sent.text
    flood = _init_otp(second, contact)
    assert flood.status_code == 429, flood.text
    assert "this contact" in flood.json()["message"]


def test_an_honest_code_goes_out_from_the_operators_sender(world: World,
                                                           tenant: Tenant) -> None:
    api, _ = _tenant_user(world, tenant)
    contact = "honest-branding@example.com"
    sent = _init_otp(api, contact, appName="Alice's Wallet & Co",
                     emailCustomization={"logoUrl": "https://cdn.example.com/logo.png"})
    assert sent.status_code == 200, sent.text
    mail = world.proxied.mailbox.last_to(contact)
    assert "login@wallet.example" in str(mail["From"])
    assert "Alice's Wallet & Co" in str(mail["Subject"])
    assert mail["Reply-To"] is None
    # Naming the configured sender is not foreign.
    again = _init_otp(api, "honest-sender@example.com",
                      sendFromEmailAddress="login@wallet.example")
    assert again.status_code == 200, again.text


def test_codes_are_limited_per_sub_organization(world: World, tenant: Tenant) -> None:
    from infra.sessions.channels import PER_ORGANIZATION

    api, _ = _tenant_user(world, tenant)
    for i in range(PER_ORGANIZATION):
        sent = _init_otp(api, f"spray-{i}@example.com")
        assert sent.status_code == 200, sent.text
    flood = _init_otp(api, "spray-last@example.com")
    assert flood.status_code == 429, flood.text
    assert "this organization" in flood.json()["message"]


def test_emailed_links_are_limited_per_user(world: World, tenant: Tenant) -> None:
    from infra.crypto import hpke
    from infra.sessions.channels import PER_CONTACT
    from tests.support.raw_api import create_sub_org, root_user_params

    email = "linked@example.com"
    create_sub_org(tenant.api, "linked", users=[root_user_params("linked", userEmail=email)])
    target = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()

    def email_auth() -> Any:
        return tenant.api.submit("email_auth", "ACTIVITY_TYPE_EMAIL_AUTH_V2", {
            "email": email, "targetPublicKey": target, "invalidateExisting": True,
            "emailCustomization": {"appName": "Links"}})

    for _ in range(PER_CONTACT):
        sent = email_auth()
        assert sent.status_code == 200, sent.text
    flood = email_auth()
    assert flood.status_code == 429, flood.text
    assert "this contact" in flood.json()["message"]
