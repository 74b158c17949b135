"""Where a webhook may be sent: SSRF rules checked when registering and again at send time.

A destination is an ``https`` URL without userinfo whose host resolves only to public
addresses. Private, loopback, link-local, multicast, reserved, shared (CGNAT) and unspecified
addresses are refused, including when they hide inside IPv6 (IPv4-mapped, NAT64, 6to4, Teredo).
An :class:`AllowList` (``WALLETD_WEBHOOK_ALLOW``: comma-separated hosts or CIDRs, empty by
default, parsed by the caller) names destinations that may be private and may use plain
``http``: for development and tests. A host name listed by name may use http; a host name
whose every resolved address is inside a listed network (``127.0.0.0/8`` for
``http://localhost:8080``) may too, which only resolution can tell: :func:`parse_destination`
lets such a URL through when networks are listed and :func:`resolve_destination` decides.

:func:`parse_destination` is the static check (registration). :func:`resolve_destination` runs
at send time, resolves the host once and returns the address to connect to, so the address
that was checked is the address that is used (no DNS rebinding between check and connect).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from infra.errors import InvalidRequest, Unavailable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: ``(host, port) -> addresses``; the default asks the system resolver.
Resolver = Callable[[str, int], Sequence[str]]

MAX_URL_LENGTH = 2048
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_DEFAULT_PORTS = {"https": 443, "http": 80}


class UnsafeDestination(InvalidRequest):
    """The webhook URL is not allowed (scheme, userinfo, or a non-public address)."""

    code = "unsafe_webhook_destination"


class DestinationUnresolved(Unavailable):
    """The webhook host did not resolve right now; worth trying again later."""

    code = "webhook_destination_unresolved"


def _normalize_host(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    if not host:
        raise UnsafeDestination("the webhook URL has no host", field="url")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        ascii_host = host.encode("idna").decode("ascii")
    except UnicodeError as exc:
        raise UnsafeDestination("the webhook host is not a valid name", field="url") from exc
    if any(not (c.isalnum() or c in "-.") for c in ascii_host):
        raise UnsafeDestination("the webhook host is not a valid name", field="url")
    return ascii_host


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


@dataclass(frozen=True)
class AllowList:
    """Hosts (exact names) and networks that may be private and plain ``http``."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> AllowList:
        """Parse ``"dev.local, 127.0.0.1, 10.0.0.0/8"``; blank entries are ignored.

        Raises:
            ValueError: An entry is neither a network nor a host name.
        """
        return cls.of(part for part in (text or "").split(","))

    @classmethod
    def of(cls, entries: Iterable[str]) -> AllowList:
        """Build from separate entries, each a host name, an address or a CIDR."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            try:
                hosts.add(_normalize_host(entry))
            except UnsafeDestination as exc:
                raise ValueError(f"not a host or CIDR: {entry!r}") from exc
        return cls(frozenset(hosts), tuple(networks))

    def allows_address(self, address: IPAddress) -> bool:
        """Whether ``address`` is inside an allow-listed network."""
        return any(address in net for net in self.networks if net.version == address.version)

    def allows_host(self, host: str) -> bool:
        """Whether ``host`` (normalized) is allow-listed by name or as an address."""
        literal = _literal(host)
        if literal is not None:
            return self.allows_address(literal)
        return host in self.hosts


def _translated_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv4-mapped or NAT64 (RFC 6052) address stands for."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _tunnelled_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses carried inside 6to4 and Teredo addresses."""
    found: list[ipaddress.IPv4Address] = []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def is_public_address(address: IPAddress) -> bool:
    """Whether ``address`` is a globally routable unicast address (and hides no other).

    IPv4-mapped and NAT64 addresses are judged by the IPv4 address they stand for; 6to4 and
    Teredo addresses must be public themselves and carry only public IPv4 addresses.
    """
    if isinstance(address, ipaddress.IPv6Address):
        translated = _translated_ipv4(address)
        if translated is not None:
            return is_public_address(translated)
        if not all(is_public_address(inner) for inner in _tunnelled_ipv4(address)):
            return False
    return not (
        not address.is_global
        or address.is_multicast
        or address.is_reserved
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
        or address.is_private
    )


@dataclass(frozen=True)
class Destination:
    """A statically checked webhook URL.

    Attributes:
        url: The URL without fragment, as it will be requested.
        scheme: ``https`` (or ``http`` when allow-listed).
        host: Lowercase ASCII host name or canonical address (no brackets).
        port: Explicit or default port.
    """

    url: str
    scheme: str
    host: str
    port: int


@dataclass(frozen=True)
class ResolvedDestination:
    """A destination checked at send time, pinned to one address.

    Attributes:
        destination: The parsed URL.
        address: The checked address to connect to.
        addresses: Every address the host resolved to (all were checked).
    """

    destination: Destination
    address: str
    addresses: tuple[str, ...]


def parse_destination(url: str, allow: AllowList) -> Destination:
    """Check a webhook URL without resolving it.

    Raises:
        UnsafeDestination: Not https (unless allow-listed), userinfo present, no host, bad
            port, too long, or an address literal that is not public (unless allow-listed).
    """
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeDestination("the webhook URL is too long", field="url")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise UnsafeDestination("the webhook URL is malformed", field="url") from exc
    if port == 0:
        raise UnsafeDestination("the webhook URL has an invalid port", field="url")
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise UnsafeDestination("the webhook URL must use https", field="url")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise UnsafeDestination("the webhook URL must not contain credentials", field="url")
    host = _normalize_host(parts.hostname or "")
    allowed = allow.allows_host(host)
    literal = _literal(host)
    if scheme == "http" and not allowed and not (literal is None and allow.networks):
        raise UnsafeDestination("plain http is only allowed for allow-listed hosts", field="url")
    if literal is not None and not allowed and not is_public_address(literal):
        raise UnsafeDestination("the webhook address is not public", field="url")
    netloc = f"[{host}]" if literal is not None and literal.version == 6 else host
    if port is not None:
        netloc = f"{netloc}:{port}"
    clean = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    return Destination(url=clean, scheme=scheme, host=host, port=port or _DEFAULT_PORTS[scheme])


def system_resolver(host: str, port: int) -> list[str]:
    """Resolve with ``getaddrinfo``, keeping the resolver's order and dropping duplicates.

    Raises:
        DestinationUnresolved: The name does not resolve now.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise DestinationUnresolved(f"cannot resolve webhook host {host!r}") from exc
    seen: dict[str, None] = {}
    for _family, _type, _proto, _name, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), None)
    return list(seen)


def resolve_destination(
    destination: Destination,
    allow: AllowList,
    resolver: Resolver = system_resolver,
) -> ResolvedDestination:
    """Resolve at send time and check every address; pin the first.

    A host allow-listed by name may resolve anywhere. Otherwise every address must be public
    or inside an allow-listed network — for plain http, inside an allow-listed network; one
    bad address rejects the whole destination, so a resolver that answers with a mix cannot
    steer the connection.

    Raises:
        UnsafeDestination: An address is not allowed, or http is used without the allow list.
        DestinationUnresolved: The host does not resolve now.
    """
    literal = _literal(destination.host)
    plain = destination.scheme == "http"
    if plain and not allow.allows_host(destination.host) and (literal is not None or not allow.networks):
        raise UnsafeDestination("plain http is only allowed for allow-listed hosts", field="url")
    if literal is not None:
        raw: Sequence[str] = [destination.host]
    else:
        raw = resolver(destination.host, destination.port)
    addresses: list[IPAddress] = []
    for text in raw:
        try:
            addresses.append(ipaddress.ip_address(text.split("%", 1)[0]))
        except ValueError as exc:
            raise DestinationUnresolved("the resolver returned a non-address") from exc
    if not addresses:
        raise DestinationUnresolved(f"webhook host {destination.host!r} has no address")
    by_name = literal is None and destination.host in allow.hosts
    for address in addresses:
        if by_name or allow.allows_address(address):
            continue
        if plain:
            raise UnsafeDestination(
                "plain http is only allowed for allow-listed hosts; "
                f"{destination.host} resolves to {address}, outside the allow-listed networks"
            )
        if not is_public_address(address):
            raise UnsafeDestination("the webhook host resolves to a non-public address")
    texts = tuple(str(a) for a in addresses)
    return ResolvedDestination(destination=destination, address=texts[0], addresses=texts)
