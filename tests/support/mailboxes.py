"""Loopback message receivers: a real SMTP server (aiosmtpd) and a Twilio-style SMS API."""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

from aiosmtpd.controller import Controller

from tests.support.deployment import free_port


@dataclass
class Mailbox:
    """Every message the SMTP server accepted, parsed."""

    messages: list[EmailMessage] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = message_from_bytes(envelope.content, policy=policy.default)
        with self.lock:
            self.messages.append(msg)  # type: ignore[arg-type]
            self.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        return "250 OK"

    def last_to(self, address: str, timeout: float = 10.0) -> EmailMessage:
        """The newest message to ``address`` (waits for it to arrive)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                found = [m for m in self.messages if address.lower() in str(m["To"]).lower()]
            if found:
                return found[-1]
            time.sleep(0.05)
        raise AssertionError(f"no email to {address}")

    def count_to(self, address: str) -> int:
        with self.lock:
            return sum(1 for m in self.messages if address in str(m["To"]))


def text_part(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def html_part(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


def code_in(text: str) -> str:
    """The code standing alone on its own line of a text part."""
    lines = [line.strip() for line in text.splitlines()]
    codes = [line for line in lines if re.fullmatch(r"[0-9A-Z]{6,9}", line)]
    assert len(codes) == 1, text
    return codes[0]


def start_smtp() -> tuple[Controller, Mailbox, int]:
    box = Mailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    return controller, box, port


@dataclass
class SmsApi:
    """A Twilio-compatible ``Messages.json`` endpoint on loopback."""

    sid: str = "AC0123456789"
    token: str = "sms-secret-token"
    received: list[dict[str, Any]] = field(default_factory=list)
    fail_next: int = 0
    server: ThreadingHTTPServer | None = None

    def start(self) -> SmsApi:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                auth = self.headers.get("Authorization", "")
                expected = "Basic " + base64.b64encode(f"{api.sid}:{api.token}".encode()).decode()
                path_ok = self.path == f"/2010-04-01/Accounts/{api.sid}/Messages.json"
                if api.fail_next > 0:
                    api.fail_next -= 1
                    status, body = 503, {"message": "try later"}
                elif auth != expected or not path_ok:
                    status, body = 401, {"message": "unauthorized"}
                else:
                    api.received.append(form)
                    status, body = 201, {"sid": "SM1", "status": "queued"}
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def last_to(self, number: str) -> dict[str, Any]:
        found = [m for m in self.received if m.get("To") == number]
        assert found, f"no SMS to {number}"
        return found[-1]
