"""Destination safety: a table of URLs and resolved addresses, with and without an allow list."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from infra.webhooks.destinations import (
    AllowList,
    DestinationUnresolved,
    Resolver,
    UnsafeDestination,
    is_public_address,
    parse_destination,
    resolve_destination,
    system_resolver,
)
from infra.webhooks.endpoints import check_url

NONE = AllowList()


def _fixed(*addresses: str) -> Resolver:
    def resolver(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolver


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.8.9.10",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "192.0.2.1",
        "198.18.0.1",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd00:ec2::254",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "2002:7f00:1::1",
        "2001:db8::1",
    ],
)
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address",
    [
        "93.184.216.34",
        "1.1.1.1",
        "2606:4700:4700::1111",
        "::ffff:93.184.216.34",
        "64:ff9b::808:808",
    ],
)
def test_public_addresses_are_allowed(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://example.com/hook", "http"),
        ("ftp://example.com/hook", "https"),
        ("example.com/hook", "https"),
        ("https://user:pw@example.com/hook", "credentials"),
        ("https://user@example.com/hook", "credentials"),
        ("https://@example.com/hook", "credentials"),
        ("https:///hook", "host"),
        ("https://127.0.0.1/hook", "public"),
        ("https://[::1]/hook", "public"),
        ("https://[::ffff:169.254.169.254]/", "public"),
        ("https://example.com:0/", "port"),
        ("https://example.com:99999/", "malformed"),
        ("https://exa mple.com/", "name"),
        ("https://example.com/" + "a" * 2100, "long"),
    ],
)
def test_parse_destination_refuses_unsafe_urls(url: str, reason: str) -> None:
    with pytest.raises(UnsafeDestination, match=reason):
        parse_destination(url, NONE)


def test_parse_destination_normalizes_and_drops_fragment() -> None:
    dest = parse_destination("HTTPS://Hooks.Example.COM./in?x=1#frag", NONE)
    assert (dest.url, dest.scheme, dest.host, dest.port) == (
        "https://hooks.example.com/in?x=1",
        "https",
        "hooks.example.com",
        443,
    )


def test_parse_destination_encodes_international_names() -> None:
    assert parse_destination("https://bücher.example/", NONE).host == "xn--bcher-kva.example"


@pytest.mark.parametrize(
    ("allow", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8080/hook"),
        ("127.0.0.0/8", "https://127.0.0.2/hook"),
        ("localhost", "http://localhost:9000/"),
        ("::1", "http://[::1]:9000/"),
        (" dev.internal , 10.0.0.0/8 ", "http://dev.internal/"),
    ],
)
def test_allow_list_permits_private_and_plain_http(allow: str, url: str) -> None:
    assert parse_destination(url, AllowList.parse(allow)).url.startswith(url.split(":")[0])


def test_allow_list_for_one_host_does_not_open_http_for_others() -> None:
    with pytest.raises(UnsafeDestination):
        parse_destination("http://example.com/", AllowList.parse("localhost"))
    # With networks listed, a name's addresses decide: a public one is not allow-listed.
    allow = AllowList.parse("localhost,10.0.0.0/8")
    dest = parse_destination("http://example.com/", allow)
    with pytest.raises(UnsafeDestination):
        resolve_destination(dest, allow, _fixed("93.184.216.34"))
    with pytest.raises(UnsafeDestination):
        check_url("http://example.com/", allow, _fixed("93.184.216.34"))


@pytest.mark.parametrize(
    ("addresses", "ok"),
    [
        (["127.0.0.1"], True),
        (["127.0.0.1", "::1"], False),  # ::1 is not in 127.0.0.0/8
        (["127.0.0.1", "93.184.216.34"], False),  # public is not enough for plain http
        (["10.0.0.1"], False),
    ],
)
def test_plain_http_to_a_name_resolving_into_an_allowed_network(addresses: list[str], ok: bool) -> None:
    allow = AllowList.parse("127.0.0.0/8")
    url = "http://localhost:8080/hook"
    dest = parse_destination(url, allow)
    if ok:
        assert check_url(url, allow, _fixed(*addresses)) == url
        assert resolve_destination(dest, allow, _fixed(*addresses)).address == "127.0.0.1"
    else:
        with pytest.raises(UnsafeDestination):
            check_url(url, allow, _fixed(*addresses))
        with pytest.raises(UnsafeDestination):
            resolve_destination(dest, allow, _fixed(*addresses))


def test_plain_http_to_an_unresolvable_name_is_refused_at_registration() -> None:
    with pytest.raises(UnsafeDestination):
        check_url("http://nowhere.test/", AllowList.parse("127.0.0.0/8"), _fixed())


def test_allow_list_rejects_garbage_entries() -> None:
    with pytest.raises(ValueError):
        AllowList.parse("good.example, not a host")


def test_empty_allow_list_is_the_default() -> None:
    assert AllowList.parse("") == AllowList.parse(None) == AllowList()


@pytest.mark.parametrize(
    ("addresses", "allow", "safe"),
    [
        (["93.184.216.34"], "", True),
        (["93.184.216.34", "2606:4700::1"], "", True),
        (["127.0.0.1"], "", False),
        (["93.184.216.34", "10.0.0.1"], "", False),  # one bad answer spoils the lot
        (["169.254.169.254"], "", False),
        (["::ffff:127.0.0.1"], "", False),
        (["fe80::1%eth0"], "", False),
        (["10.0.0.1"], "10.0.0.0/8", True),
        (["10.0.0.1", "192.168.0.1"], "10.0.0.0/8", False),
        (["127.0.0.1"], "hooks.example.com", True),  # allow-listed by name
        (["127.0.0.1"], "other.example.com", False),
    ],
)
def test_resolution_is_checked_at_send_time(addresses: list[str], allow: str, safe: bool) -> None:
    allow_list = AllowList.parse(allow)
    dest = parse_destination("https://hooks.example.com/h", allow_list)
    if safe:
        resolved = resolve_destination(dest, allow_list, _fixed(*addresses))
        assert resolved.address == str(ipaddress.ip_address(addresses[0]))
        assert len(resolved.addresses) == len(addresses)
    else:
        with pytest.raises(UnsafeDestination):
            resolve_destination(dest, allow_list, _fixed(*addresses))


def test_address_literal_is_not_resolved() -> None:
    def explode(host: str, port: int) -> list[str]:
        raise AssertionError("must not resolve a literal")

    dest = parse_destination("https://93.184.216.34/h", NONE)
    assert resolve_destination(dest, NONE, explode).address == "93.184.216.34"


def test_empty_or_garbage_resolution_is_retryable_not_unsafe() -> None:
    dest = parse_destination("https://hooks.example.com/h", NONE)
    with pytest.raises(DestinationUnresolved):
        resolve_destination(dest, NONE, _fixed())
    with pytest.raises(DestinationUnresolved):
        resolve_destination(dest, NONE, _fixed("not-an-ip"))


def test_http_is_refused_at_send_time_when_allow_list_shrank() -> None:
    dest = parse_destination("http://127.0.0.1:1/h", AllowList.parse("127.0.0.1"))
    with pytest.raises(UnsafeDestination):
        resolve_destination(dest, NONE, _fixed("127.0.0.1"))


def test_system_resolver_failure_is_unresolved(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object, **kwargs: object) -> list[object]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)  # no DNS traffic from tests
    dest = parse_destination("https://does-not-exist.invalid/h", NONE)
    with pytest.raises(DestinationUnresolved):
        resolve_destination(dest, NONE)


def test_system_resolver_keeps_order_and_drops_duplicates(monkeypatch: pytest.MonkeyPatch) -> None:
    infos = [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)),
        (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2606:2800:220:1::1", 443, 0, 0)),
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443)),
    ]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: infos)
    assert system_resolver("a.example", 443) == ["93.184.216.34", "2606:2800:220:1::1"]
