"""One delivery attempt against a real receiver on 127.0.0.1."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from infra.webhooks import signing
from infra.webhooks.destinations import (
    AllowList,
    Resolver,
    parse_destination,
    resolve_destination,
)
from infra.webhooks.payloads import activity_update_event
from infra.webhooks.signing import WebhookSigningKey
from notifier.delivery import DeliveryConfig, attempt_delivery, parse_retry_after, pinned_url
from tests.support.webhook_receiver import TLS_HOSTNAME, Reply, WebhookReceiver

LOOPBACK = AllowList.parse(f"127.0.0.1, {TLS_HOSTNAME}")
FAST = DeliveryConfig(connect_timeout_s=2.0, read_timeout_s=2.0, transport_wait_max_s=0.05)
ACTIVITY = {
    "id": "act-1",
    "organizationId": "org-1",
    "status": "ACTIVITY_STATUS_COMPLETED",
    "type": "ACTIVITY_TYPE_CREATE_WALLET",
}


def _signed(key: WebhookSigningKey) -> tuple[bytes, dict[str, str]]:
    event = activity_update_event(ACTIVITY, sequence=1)
    headers = signing.sign_delivery(
        key,
        body=event.body,
        event_id=event.event_id,
        event_type=event.event_type,
        organization_id=event.organization_id,
        timestamp_ms=1_760_000_000_000,
    )
    return event.body, headers


def _map(name: str, *addresses: str, calls: list[str] | None = None) -> Resolver:
    def resolver(host: str, port: int) -> list[str]:
        assert host == name
        if calls is not None:
            calls.append(host)
            if len(calls) > 1:
                return ["10.9.9.9"]
        return list(addresses)

    return resolver


def test_success_delivers_exact_body_and_verifiable_signature(receiver: WebhookReceiver) -> None:
    key = WebhookSigningKey.generate()
    body, headers = _signed(key)
    record = attempt_delivery(receiver.url, body, headers, allow=LOOPBACK, config=FAST)

    assert (record.status_code, record.response_excerpt, record.error) == (200, "ok", None)
    assert record.address == "127.0.0.1" and record.transport_tries == 1
    (got,) = receiver.wait_for(1)
    assert got.method == "POST" and got.path == "/hook"
    assert got.body == body and got.json()["id"] == "act-1"
    assert got.header("Content-Type") == "application/json"
    message = (
        f"v1.ed25519.{got.header('X-Turnkey-Signature-Key-Id')}."
        f"{got.header('X-Turnkey-Timestamp')}.{got.header('X-Turnkey-Event-Id')}."
    ).encode() + got.body
    Ed25519PublicKey.from_public_bytes(key.public_key).verify(
        bytes.fromhex(got.header("X-Turnkey-Signature") or ""), message
    )


def test_server_error_then_success_are_separate_recorded_attempts(
    receiver: WebhookReceiver,
) -> None:
    receiver.script([Reply(500, b"boom")])
    body, headers = _signed(WebhookSigningKey.generate())
    first = attempt_delivery(receiver.url, body, headers, allow=LOOPBACK, config=FAST)
    second = attempt_delivery(receiver.url, body, headers, allow=LOOPBACK, config=FAST)
    assert (first.status_code, first.response_excerpt) == (500, "boom")
    assert second.status_code == 200
    assert [r.status for r in receiver.wait_for(2)] == [500, 200]


def test_redirect_is_not_followed(receiver: WebhookReceiver) -> None:
    receiver.script([Reply(302, headers={"Location": receiver.url + "/elsewhere"})])
    record = attempt_delivery(receiver.url, b"{}", {}, allow=LOOPBACK, config=FAST)
    assert record.status_code == 302
    assert [r.path for r in receiver.wait_for(1)] == ["/hook"]
    assert len(receiver.requests) == 1


def test_connection_refused_is_retried_briefly_then_reported(receiver: WebhookReceiver) -> None:
    url = receiver.url
    receiver.stop()
    record = attempt_delivery(url, b"{}", {}, allow=LOOPBACK, config=FAST)
    assert record.status_code is None
    assert record.error and "ConnectionError" in record.error
    assert record.transport_tries == FAST.transport_attempts


def test_read_timeout_is_not_retried_because_the_request_was_sent(
    receiver: WebhookReceiver,
) -> None:
    receiver.script([Reply(hang=True)])
    config = DeliveryConfig(connect_timeout_s=2.0, read_timeout_s=0.2)
    record = attempt_delivery(receiver.url, b"{}", {}, allow=LOOPBACK, config=config)
    receiver.release()
    assert record.status_code is None
    assert record.error and "Timeout" in record.error
    assert record.transport_tries == 1


@pytest.mark.parametrize("tls", [False, True], ids=["http", "https"])
def test_dripping_headers_are_cut_off_at_the_attempt_deadline(
    tls: bool,
    receiver: WebhookReceiver,
    tls_receiver: WebhookReceiver,
    tls_files: tuple[Path, Path],
) -> None:
    # Every header line arrives well within the read timeout, so only the attempt's deadline
    # can stop it: the whole answer would take 50 x 0.2 s and then be a 200.
    server = tls_receiver if tls else receiver
    server.script([Reply(drip_s=0.2, drip_lines=50)])
    config = DeliveryConfig(
        connect_timeout_s=2.0,
        read_timeout_s=0.5,
        total_timeout_s=1.0,
        verify=str(tls_files[0]),
    )
    url = f"{'https' if tls else 'http'}://{TLS_HOSTNAME}:{server.port}/hook"
    record = attempt_delivery(
        url, b"{}", {}, allow=LOOPBACK, config=config, resolver=_map(TLS_HOSTNAME, "127.0.0.1")
    )
    assert record.status_code is None
    assert record.error and record.error.startswith("deadline of 1 s exceeded"), record.error
    assert record.transport_tries == 1
    assert server.wait_cut_off(1) == 1  # the client hung up before the headers were complete
    assert len(server.requests) == 1


def test_dropped_connection_is_a_retryable_failure_without_status(
    receiver: WebhookReceiver,
) -> None:
    receiver.script([Reply(drop=True)])
    record = attempt_delivery(receiver.url, b"{}", {}, allow=LOOPBACK, config=FAST)
    assert record.status_code is None and record.error
    assert record.transport_tries == 1


def test_private_destination_is_refused_without_sending(receiver: WebhookReceiver) -> None:
    record = attempt_delivery(receiver.url, b"{}", {}, allow=AllowList(), config=FAST)
    assert record.refused and record.status_code is None and record.address is None
    assert receiver.requests == []


def test_name_resolving_to_loopback_is_refused_without_allow_list(
    receiver: WebhookReceiver,
) -> None:
    url = f"https://hooks.example.test:{receiver.port}/hook"
    record = attempt_delivery(
        url,
        b"{}",
        {},
        allow=AllowList(),
        config=FAST,
        resolver=_map("hooks.example.test", "127.0.0.1"),
    )
    assert record.refused
    assert receiver.requests == []


def test_connection_goes_to_the_checked_address_not_a_second_lookup(
    receiver: WebhookReceiver,
) -> None:
    calls: list[str] = []
    url = f"http://rebind.test:{receiver.port}/hook"
    allow = AllowList.parse("rebind.test")
    record = attempt_delivery(
        url,
        b"{}",
        {},
        allow=allow,
        config=FAST,
        resolver=_map("rebind.test", "127.0.0.1", calls=calls),
    )
    assert record.status_code == 200 and record.address == "127.0.0.1"
    assert calls == ["rebind.test"]
    (got,) = receiver.wait_for(1)
    assert got.header("Host") == f"rebind.test:{receiver.port}"


def test_plain_http_to_a_name_in_an_allow_listed_network_is_delivered(
    receiver: WebhookReceiver,
) -> None:
    url = f"http://localhost:{receiver.port}/hook"
    allow = AllowList.parse("127.0.0.0/8")
    record = attempt_delivery(
        url, b"{}", {}, allow=allow, config=FAST, resolver=_map("localhost", "127.0.0.1")
    )
    assert (record.status_code, record.address, record.refused) == (200, "127.0.0.1", False)
    assert receiver.wait_for(1)[0].header("Host") == f"localhost:{receiver.port}"


def test_https_pinned_to_address_still_checks_certificate_for_the_host_name(
    tls_receiver: WebhookReceiver, tls_files: tuple[Path, Path]
) -> None:
    config = DeliveryConfig(connect_timeout_s=2.0, read_timeout_s=2.0, verify=str(tls_files[0]))
    url = f"https://{TLS_HOSTNAME}:{tls_receiver.port}/hook"
    record = attempt_delivery(
        url, b"{}", {}, allow=LOOPBACK, config=config, resolver=_map(TLS_HOSTNAME, "127.0.0.1")
    )
    assert record.status_code == 200, record.error
    assert tls_receiver.wait_for(1)[0].header("Host") == f"{TLS_HOSTNAME}:{tls_receiver.port}"


def test_https_certificate_for_another_name_fails_the_attempt(
    tls_receiver: WebhookReceiver, tls_files: tuple[Path, Path]
) -> None:
    config = DeliveryConfig(
        connect_timeout_s=2.0,
        read_timeout_s=2.0,
        verify=str(tls_files[0]),
        transport_attempts=1,
    )
    url = f"https://impostor.test:{tls_receiver.port}/hook"
    record = attempt_delivery(
        url, b"{}", {}, allow=LOOPBACK, config=config, resolver=_map("impostor.test", "127.0.0.1")
    )
    assert record.status_code is None
    assert record.error and "SSL" in record.error
    assert tls_receiver.requests == []


def test_retry_after_and_excerpt_limit_are_recorded(receiver: WebhookReceiver) -> None:
    receiver.script([Reply(503, b"x" * 5000, headers={"Retry-After": "7"})])
    config = DeliveryConfig(excerpt_bytes=100)
    record = attempt_delivery(receiver.url, b"{}", {}, allow=LOOPBACK, config=config)
    assert record.status_code == 503
    assert record.retry_after_s == 7.0
    assert record.response_excerpt == "x" * 100


def test_receiver_sees_json_content_type_and_user_agent(receiver: WebhookReceiver) -> None:
    attempt_delivery(receiver.url, json.dumps({"a": 1}).encode(), {}, allow=LOOPBACK)
    (got,) = receiver.wait_for(1)
    assert got.header("Content-Type") == "application/json"
    assert (got.header("User-Agent") or "").startswith("walletd-webhooks/")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://a.example/h?x=1", ("https://93.184.216.34:443/h?x=1", "a.example")),
        ("https://a.example:8443/", ("https://93.184.216.34:8443/", "a.example:8443")),
    ],
)
def test_pinned_url_swaps_host_for_address(url: str, expected: tuple[str, str]) -> None:
    resolved = resolve_destination(
        parse_destination(url, AllowList()), AllowList(), _map("a.example", "93.184.216.34")
    )
    assert pinned_url(resolved) == expected


def test_pinned_url_brackets_ipv6() -> None:
    resolved = resolve_destination(
        parse_destination("https://a.example/", AllowList()),
        AllowList(),
        _map("a.example", "2606:4700::1"),
    )
    assert pinned_url(resolved) == ("https://[2606:4700::1]:443/", "a.example")


def test_parse_retry_after_accepts_seconds_and_http_dates() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Thu, 01 Jan 2026 00:01:00 GMT", now=now) == 60.0
    assert parse_retry_after("Wed, 31 Dec 2025 00:00:00 GMT", now=now) == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None


class _KeepAliveReceiver:
    """An HTTP/1.1 receiver that keeps connections open and notes each request's peer port."""

    def __init__(self) -> None:
        import http.server
        import threading

        seen: list[int] = []
        self.peers = seen

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen.append(self.client_address[1])
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_kept_alive_connections_are_reused_and_every_attempt_is_still_checked() -> None:
    from notifier.delivery import Transports

    receiver = _KeepAliveReceiver()
    transports = Transports(2)
    url = f"http://hooks.keep.test:{receiver.port}/hook"
    allow = AllowList.parse("127.0.0.1/32")
    try:
        for _ in range(3):
            record = attempt_delivery(url, b"{}", {}, allow=allow, config=FAST,
                                      resolver=_map("hooks.keep.test", "127.0.0.1"),
                                      transports=transports, endpoint_id="e1")
            assert record.status_code == 200, record.error
        # One connection carried the three requests.
        assert len(receiver.peers) == 3 and len(set(receiver.peers)) == 1
        # The name now resolves outside the allowed network: the kept connection to the
        # address checked before is not used, nothing is sent.
        looked_up_before = ["first lookup"]  # the next lookup answers 10.9.9.9
        refused = attempt_delivery(url, b"{}", {}, allow=allow, config=FAST,
                                   resolver=_map("hooks.keep.test", "127.0.0.1",
                                                 calls=looked_up_before),
                                   transports=transports, endpoint_id="e1")
        assert refused.refused and refused.status_code is None
        assert len(receiver.peers) == 3
    finally:
        transports.close()
        receiver.close()
