"""``list_email_events``: what walletd's SMTP hop saw, against a real SMTP server (aiosmtpd)
that accepts, defers (451) or refuses (550) by recipient, on both paths."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from tests.support.deployment import Deployment, free_port, make_organization
from tests.support.mailboxes import Mailbox
from tests.support.paths import deployment_on
from tests.support.raw_api import RawApi


class ScriptedMailbox(Mailbox):
    """Refuses ``bounce-*`` recipients for good and defers ``defer-*`` ones once."""

    deferred: set[str]

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          rcpt_options: list[str]) -> str:
        if address.startswith("bounce-"):
            return "550 5.1.1 mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        recipient = envelope.rcpt_tos[0]
        if recipient.startswith("defer-") and recipient not in self.deferred:
            self.deferred.add(recipient)
            return "451 4.3.0 try again later"
        await super().handle_DATA(server, session, envelope)
        return "250 2.0.0 queued as Q123"


@pytest.fixture(scope="module")
def smtp_port() -> Iterator[int]:
    box = ScriptedMailbox()
    box.deferred = set()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    yield port
    controller.stop()


@pytest.fixture(scope="module", params=["embedded", "production"])
def mail_dep(request: pytest.FixtureRequest, smtp_port: int,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    env = {"WALLETD_SMTP_URL": f"smtp://127.0.0.1:{smtp_port}"}
    workdir = tmp_path_factory.mktemp(f"email-events-{request.param}")
    with deployment_on(request.param, workdir, env) as dep:
        yield dep


def _otp(api: RawApi, contact: str) -> Any:
    return api.submit("init_otp", "ACTIVITY_TYPE_INIT_OTP_V3",
                      {"otpType": "OTP_TYPE_EMAIL", "contact": contact, "appName": "App"})


def _events(api: RawApi, email: str, count: int, **extra: Any) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 30
    while True:
        events = api.read("list_email_events", {"email": email, **extra})["emailEvents"]
        if len(events) >= count or time.monotonic() > deadline:
            return list(events)
        time.sleep(0.2)


def test_a_delivered_email_shows_the_relay_reply(mail_dep: Deployment) -> None:
    api = RawApi(mail_dep, mail_dep.root, mail_dep.root.organization_id)
    email = f"user-{uuid.uuid4().hex[:8]}@example.com"
    assert _otp(api, email).status_code == 200
    events = _events(api, email, 2)
    assert [e["eventType"] for e in events] == ["Delivery", "Send"]  # newest first
    delivery = events[0]
    assert delivery["details"]["deliverySmtpResponse"].startswith("250 2.0.0 queued as Q123")
    assert delivery["toAddress"] == email
    assert delivery["messageId"] == events[1]["messageId"]
    assert int(delivery["timestamp"]) >= int(events[1]["timestamp"])
    only = _events(api, email, 1, eventType="Send")
    assert [e["eventType"] for e in only] == ["Send"]


def test_a_deferral_then_delivery_are_both_recorded(mail_dep: Deployment) -> None:
    api = RawApi(mail_dep, mail_dep.root, mail_dep.root.organization_id)
    email = f"defer-{uuid.uuid4().hex[:8]}@example.com"
    assert _otp(api, email).status_code == 200
    events = _events(api, email, 3)
    assert [e["eventType"] for e in events] == ["Delivery", "DeliveryDelay", "Send"]
    assert "451" in events[1]["details"]["diagnosticCode"]


def test_a_bounce_is_recorded_even_though_the_activity_fails(mail_dep: Deployment) -> None:
    api = RawApi(mail_dep, mail_dep.root, mail_dep.root.organization_id)
    email = f"bounce-{uuid.uuid4().hex[:8]}@example.com"
    response = _otp(api, email)
    assert response.status_code >= 400, response.text
    events = _events(api, email, 2)
    assert [e["eventType"] for e in events] == ["Bounce", "Send"]
    assert events[0]["details"]["bounceType"] == "Permanent"
    assert "550" in events[0]["details"]["diagnosticCode"]


def test_another_organization_sees_none_of_them(mail_dep: Deployment) -> None:
    api = RawApi(mail_dep, mail_dep.root, mail_dep.root.organization_id)
    email = f"user-{uuid.uuid4().hex[:8]}@example.com"
    assert _otp(api, email).status_code == 200
    assert len(_events(api, email, 2)) == 2
    other = make_organization(mail_dep, "Mail Other")
    theirs = RawApi(mail_dep, other, other.organization_id)
    assert theirs.read("list_email_events", {"email": email})["emailEvents"] == []
    bad = theirs.query("list_email_events", {"email": email, "eventType": "Complaint"})
    assert bad.status_code == 400
