"""Delivery against real transports on loopback: SMTP (aiosmtpd), a Twilio-style API, failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from infra.errors import Unavailable
from infra.sessions import delivery
from infra.sessions.delivery import EmailCustomization
from infra.settings import Settings
from tests.support.deployment import free_port
from tests.support.mailboxes import SmsApi, code_in, start_smtp, text_part


def _settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path), **env})


def test_smtp_server_receives_the_multipart_message(tmp_path: Path) -> None:
    controller, box, port = start_smtp()
    try:
        settings = _settings(tmp_path, WALLETD_SMTP_URL=f"smtp://127.0.0.1:{port}",
                             WALLETD_EMAIL_FROM="App <app@x.example>")
        email = delivery.render_email("otp", "to@x.example", EmailCustomization(), settings,
                                      code="SMTP12345")
        delivery.send_email(settings, email)
        msg = box.last_to("to@x.example")
        assert code_in(text_part(msg)) == "SMTP12345"
        assert box.envelopes[-1] == ("app@x.example", ["to@x.example"])
        assert not (tmp_path / "outbox").exists()
    finally:
        controller.stop()


def test_an_unreachable_smtp_server_fails_naming_the_transport_not_the_code(
        tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    settings = _settings(tmp_path, WALLETD_SMTP_URL=f"smtp://127.0.0.1:{port}")
    email = delivery.render_email("otp", "to@x.example", EmailCustomization(), settings,
                                  code="NEVERSENT")
    with pytest.raises(Unavailable) as err:
        delivery.send_email(settings, email)
    message = err.value.message
    assert f"127.0.0.1:{port}" in message and "3 attempts" in message
    assert "NEVERSENT" not in message


def test_sms_api_retries_transient_failures_and_refuses_bad_credentials(tmp_path: Path) -> None:
    api = SmsApi().start()
    try:
        env = {"WALLETD_SMS_URL": api.url, "WALLETD_SMS_ACCOUNT_SID": api.sid,
               "WALLETD_SMS_AUTH_TOKEN": api.token, "WALLETD_SMS_FROM": "+15550001111"}
        api.fail_next = 2
        delivery.send_sms(_settings(tmp_path, **env), delivery.render_sms("+15552223333", "4242",
                                                                          None))
        assert api.received[-1]["To"] == "+15552223333" and "4242" in api.received[-1]["Body"]
        assert api.fail_next == 0
        bad = _settings(tmp_path, **{**env, "WALLETD_SMS_AUTH_TOKEN": "wrong"})
        with pytest.raises(Unavailable, match="HTTP 401") as err:
            delivery.send_sms(bad, delivery.render_sms("+15552223333", "777777", None))
        assert "777777" not in err.value.message
    finally:
        api.stop()
