"""Outbound calls to issuers and providers: destination rules, no redirects, bounded answers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from infra.sessions.egress import MAX_BODY_BYTES, Egress, UpstreamUnavailable
from infra.webhooks.destinations import AllowList, UnsafeDestination

LOOPBACK = Egress(AllowList.of(["127.0.0.0/8"]), timeout_s=2.0)


class _Handler(BaseHTTPRequestHandler):
    seen: list[str] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(self.path)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/huge":
            body = b"x" * (MAX_BODY_BYTES + 10)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_an_allow_listed_loopback_answers(server: str) -> None:
    answer = LOOPBACK.request("GET", f"{server}/doc", "the test issuer")
    assert answer.status == 200 and answer.json("the test issuer") == {"ok": True}


def test_redirects_are_not_followed(server: str) -> None:
    answer = LOOPBACK.request("GET", f"{server}/redirect", "the test issuer")
    assert answer.status == 302
    assert "/elsewhere" not in _Handler.seen


def test_answers_are_capped(server: str) -> None:
    with pytest.raises(UpstreamUnavailable, match="more than"):
        LOOPBACK.request("GET", f"{server}/huge", "the test issuer")


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "https://10.0.0.1/x",
                                 "https://[::1]/x", "ftp://example.com/x",
                                 "https://user:pw@example.com/x"])
def test_private_plain_or_odd_destinations_are_refused_without_the_allow_list(url: str) -> None:
    with pytest.raises(UnsafeDestination):
        Egress().request("GET", url, "an issuer")


def test_a_name_resolving_to_a_private_address_is_refused() -> None:
    egress = Egress(resolver=lambda host, port: ["192.168.1.10"])
    with pytest.raises(UnsafeDestination, match="non-public"):
        egress.request("GET", "https://issuer.example/.well-known/openid-configuration", "x")


def test_an_unreachable_issuer_is_a_503() -> None:
    with pytest.raises(UpstreamUnavailable) as caught:
        LOOPBACK.request("GET", "http://127.0.0.1:9/x", "the test issuer")
    assert caught.value.to_wire()["code"] == 14
