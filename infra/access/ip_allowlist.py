"""IP allow-lists: which client addresses may use an organization's credentials.

An organization (a top-level one: sub-organizations are never evaluated and cannot have a
list, as Turnkey documents) has at most one organization-level list and one list per API
key (``publicKey``). Enforcement, for every authenticated request whose credential lives in
the organization:

1. no organization-level list, or one with ``enabled`` false: nothing is enforced, key-level
   lists included (they take effect only while the organization's list is enabled);
2. the request's API key has a key-level list with rules: that list decides (it overrides
   the organization's for that key);
3. otherwise the organization-level list decides (an enabled list without rules refuses
   everything);
4. a list decides "allowed" when the client address lies in one of its CIDR blocks; when the
   address cannot be evaluated (missing, not an IP address), its ``onEvaluationError``
   decides: ``ALLOW`` or ``DENY`` (the default);
5. requests stamped by the organization's auth proxy user are exempt (the proxy calls from
   its own host on behalf of end users, whose addresses the list is not about).

Rules are normalised to their network (``10.1.2.3/8`` -> ``10.0.0.0/8``; a bare address is
``/32`` or ``/128``; IPv4-mapped IPv6 becomes IPv4), de-duplicated (first label kept), at
most :data:`MAX_RULES`, with a prefix of at least :data:`MIN_PREFIX` bits per family.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from infra.access import changes
from infra.db.models.access import IpAllowlist
from infra.db.models.auth_proxy import AuthProxyConfig
from infra.errors import InvalidRequest, PermissionDenied

#: At most this many rules in one list.
MAX_RULES: Final = 100
#: The widest block a rule may name, per IP version (``0.0.0.0/0`` would allow everyone).
MIN_PREFIX: Final = {4: 8, 6: 16}
#: ``onEvaluationError`` values.
ALLOW: Final = "ALLOW"
DENY: Final = "DENY"
MAX_LABEL: Final = 256

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _network(text: str) -> Network:
    network = ipaddress.ip_network(text.strip(), strict=False)
    if isinstance(network, ipaddress.IPv6Network) and network.network_address.ipv4_mapped:
        mapped = network.network_address.ipv4_mapped
        network = ipaddress.ip_network(f"{mapped}/{max(0, network.prefixlen - 96)}", strict=False)
    return network


def normalise_rules(rules: list[Any], now_ms: int) -> list[dict[str, str]]:
    """The wire rules as stored: normalised, de-duplicated, bounded.

    Raises:
        InvalidRequest: too many rules, or a rule that is not a CIDR block within bounds
            (the message and ``field`` name the rule's index).
    """
    if len(rules) > MAX_RULES:
        raise InvalidRequest(f"an IP allowlist holds at most {MAX_RULES} rules; {len(rules)} "
                             "were sent", field="parameters.rules")
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for index, rule in enumerate(rules):
        field = f"parameters.rules[{index}].cidr"
        cidr = str(getattr(rule, "cidr", "") or "")
        try:
            network = _network(cidr)
        except ValueError:
            raise InvalidRequest(
                f"rules[{index}]: {cidr!r} is not a CIDR block; send e.g. '203.0.113.0/24' "
                "or '2001:db8::/32'", field=field) from None
        minimum = MIN_PREFIX[network.version]
        if network.prefixlen < minimum:
            raise InvalidRequest(
                f"rules[{index}]: {cidr!r} is too wide; IPv{network.version} rules need a "
                f"prefix of at least /{minimum}", field=field)
        label = str(getattr(rule, "label", "") or "")
        if len(label) > MAX_LABEL:
            raise InvalidRequest(f"rules[{index}]: label exceeds {MAX_LABEL} characters",
                                 field=f"parameters.rules[{index}].label")
        normal = str(network)
        if normal in seen:
            continue
        seen.add(normal)
        stored = {"cidr": normal, "createdAt": str(now_ms)}
        if label:
            stored["label"] = label
        out.append(stored)
    return out


def check_on_evaluation_error(value: str | None) -> str:
    """``ALLOW``/``DENY`` (default ``DENY``), or a 400."""
    if value is None or value == "":
        return DENY
    if value not in (ALLOW, DENY):
        raise InvalidRequest(f"onEvaluationError must be ALLOW or DENY, not {value!r}",
                             field="parameters.onEvaluationError")
    return value


@dataclass(frozen=True)
class RuleSet:
    """One list as enforcement reads it."""

    label: str
    networks: tuple[Network, ...]
    on_evaluation_error: str

    def allows(self, address: str | None) -> bool:
        try:
            ip = ipaddress.ip_address((address or "").strip().strip("[]").split("%")[0])
        except ValueError:
            return self.on_evaluation_error == ALLOW
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in self.networks)


@dataclass(frozen=True)
class Lists:
    """An organization's lists (``None``: nothing is enforced there)."""

    organization: RuleSet
    keys: dict[str, RuleSet]
    proxy_public_key: str


def _rule_set(row: IpAllowlist, label: str) -> RuleSet:
    networks: list[Network] = []
    for rule in row.rules or []:
        try:
            networks.append(_network(str(rule.get("cidr", ""))))
        except ValueError:
            continue  # stored rules were validated; never let a bad row widen access
    return RuleSet(label, tuple(networks), row.on_evaluation_error or DENY)


_LISTS: Final = select(IpAllowlist).where(IpAllowlist.organization_id == bindparam("organization_id"))
_PROXY_KEY: Final = select(AuthProxyConfig.api_public_key).where(
    AuthProxyConfig.organization_id == bindparam("organization_id"),
    AuthProxyConfig.enabled.is_(True))

#: The enforced lists per organization, with the auth proxy key they exempt
#: (``infra.access.changes``; attached to the announcements in bootstrap).
CACHE: Final[changes.OrganizationCache[Lists | None]] = changes.OrganizationCache(
    "ip allow-lists", ("ip_allowlists", "auth_proxy_configs"))


def _load(session: Session, organization_id: str) -> Lists | None:
    rows = list(session.scalars(_LISTS, {"organization_id": organization_id}))
    org = next((r for r in rows if not r.public_key), None)
    if org is None or not org.enabled:
        return None
    keys = {r.public_key: _rule_set(r, f"the IP allowlist of API key {r.public_key}")
            for r in rows if r.public_key and r.rules}
    proxy = session.scalar(_PROXY_KEY, {"organization_id": organization_id}) or ""
    return Lists(_rule_set(org, f"the IP allowlist of organization {organization_id}"),
                 keys, proxy)


def lists_of(session: Session, organization_id: str) -> Lists | None:
    """The enforced lists of ``organization_id`` (remembered per process)."""
    found = CACHE.get(organization_id, lambda: _load(session, organization_id))
    return found if isinstance(found, Lists) else None


def enforce(session: Session, organization_id: str, public_key: str, address: str | None) -> None:
    """Refuse (403) a request stamped with ``public_key`` of ``organization_id`` from
    ``address`` when the organization's lists say so.

    ``organization_id`` is the credential's organization, a top-level one (callers skip
    sub-organizations).
    """
    lists = lists_of(session, organization_id)
    if lists is None:
        return
    if lists.proxy_public_key and public_key == lists.proxy_public_key:
        return
    rule_set = lists.keys.get(public_key, lists.organization)
    if rule_set.allows(address):
        return
    raise PermissionDenied(
        f"request from {address or 'an unknown address'} refused by {rule_set.label}: the "
        "address is in none of its CIDR rules",
        details=[{"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                  "turnkeyErrorCode": "IP_NOT_ALLOWED"}])


def render(row: IpAllowlist | None, organization_id: str, public_key: str | None) -> dict[str, Any]:
    """``v1IpAllowlist`` (an empty, absent list when none is set)."""
    if row is None:
        out: dict[str, Any] = {"organizationId": organization_id, "rules": []}
        if public_key:
            out["publicKey"] = public_key
        else:
            out["enabled"] = False
            out["onEvaluationError"] = DENY
        return out
    out = {"organizationId": row.organization_id, "rules": list(row.rules or []),
           "onEvaluationError": row.on_evaluation_error}
    if row.public_key:
        out["publicKey"] = row.public_key
    else:
        out["enabled"] = bool(row.enabled)
    return out
