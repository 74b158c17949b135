"""Rendering codes and links, and the outbox the embedded default writes to."""

from __future__ import annotations

import json
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from infra.errors import InvalidRequest
from infra.sessions import delivery
from infra.sessions.delivery import EmailCustomization
from infra.settings import Settings


def _settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path), **env})


def test_email_is_multipart_escaped_with_the_code_alone_on_a_line(tmp_path: Path) -> None:
    custom = EmailCustomization(app_name="<b>App</b>", logo_url="https://x.example/l.png?a=1&b=2",
                                reply_to="help@x.example")
    email = delivery.render_email("otp", "u@example.com", custom, _settings(tmp_path),
                                  code="ABC123XYZ", minutes=5)
    msg = delivery.mime_of(email)
    assert msg.get_content_type() == "multipart/alternative"
    text = msg.get_body(preferencelist=("plain",)).get_content()  # type: ignore[union-attr]
    html = msg.get_body(preferencelist=("html",)).get_content()  # type: ignore[union-attr]
    assert "ABC123XYZ" in [line.strip() for line in text.splitlines()]
    assert "&lt;b&gt;App&lt;/b&gt;" in html and "<b>App</b>" not in html
    assert "a=1&amp;b=2" in html
    assert msg["Reply-To"] == "help@x.example"
    assert msg["Subject"] == "Your <b>App</b> verification code"


def test_sender_defaults_and_overrides(tmp_path: Path) -> None:
    settings = _settings(tmp_path, WALLETD_EMAIL_FROM="Wallet <login@w.example>")
    plain = delivery.render_email("otp", "u@x", EmailCustomization(), settings, code="X")
    assert plain.sender == "Wallet <login@w.example>"
    custom = delivery.render_email("otp", "u@x", EmailCustomization(
        send_from_address="a@b.example"), settings, code="X")
    assert custom.sender == "Notifications <a@b.example>"


def test_magic_link_template_takes_the_bundle() -> None:
    assert delivery.magic_link("https://a.example/?b=%s&x=1", "BUNDLE") == \
        "https://a.example/?b=BUNDLE&x=1"
    assert delivery.magic_link("", "BUNDLE") == "BUNDLE"


def test_sms_template_needs_the_placeholder() -> None:
    assert delivery.render_sms("+1", "123456", "Code {{ .OtpCode }}!").body == "Code 123456!"
    assert "123456" in delivery.render_sms("+1", "123456", None).body
    with pytest.raises(InvalidRequest, match=r"\{\{\.OtpCode\}\}"):
        delivery.check_sms_template("no code here")


def test_without_transports_messages_go_to_the_outbox(tmp_path: Path,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    settings = _settings(tmp_path)
    caplog.set_level("INFO")
    email = delivery.render_email("otp", "u@example.com", EmailCustomization(), settings,
                                  code="OUTBOX123")
    delivery.send_email(settings, email)
    delivery.send_sms(settings, delivery.render_sms("+15551112222", "654321", None))
    (eml,) = (tmp_path / "outbox").glob("*.eml")
    (sms,) = (tmp_path / "outbox").glob("*.json")
    parsed = message_from_bytes(eml.read_bytes(), policy=policy.default)
    assert parsed["To"] == "u@example.com"
    assert "OUTBOX123" in parsed.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    assert json.loads(sms.read_text())["to"] == "+15551112222"
    assert oct(eml.stat().st_mode & 0o777) == "0o600"
    logged = caplog.text
    assert str(eml) in logged and str(sms) in logged
    assert "OUTBOX123" not in logged and "654321" not in logged


def test_ingress_settings_carry_no_mail_or_sms_credentials(tmp_path: Path) -> None:
    settings = _settings(tmp_path, WALLETD_SMTP_URL="smtp://u:p@mail:25",
                         WALLETD_SMS_AUTH_TOKEN="secret")
    ingress = settings.for_role("ingress")
    assert ingress.smtp_url == "" and ingress.sms_auth_token == ""
    assert "secret" not in repr(settings) and "u:p" not in repr(settings)
