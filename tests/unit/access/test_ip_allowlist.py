"""IP allow-list rules: normalisation, bounds, and what a rule set allows (no database)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from infra.access import ip_allowlist
from infra.access.ip_allowlist import RuleSet, _network, normalise_rules
from infra.access.origin import client_address_of
from infra.errors import InvalidRequest


@dataclass
class Rule:
    cidr: str
    label: str | None = None


def test_rules_are_normalised_and_de_duplicated_keeping_the_first_label() -> None:
    rules = normalise_rules([Rule("10.1.2.3/8", "office"), Rule("10.0.0.0/8", "dup"),
                             Rule("192.0.2.7"), Rule("2001:DB8::1/32"), Rule("::ffff:192.0.2.7"),
                             Rule("  198.51.100.0/24 ")], 5)
    assert rules == [{"cidr": "10.0.0.0/8", "createdAt": "5", "label": "office"},
                     {"cidr": "192.0.2.7/32", "createdAt": "5"},
                     {"cidr": "2001:db8::/32", "createdAt": "5"},
                     {"cidr": "198.51.100.0/24", "createdAt": "5"}]


@pytest.mark.parametrize(("cidr", "message"), [
    ("300.1.2.3/24", "not a CIDR block"), ("10.0.0.0/33", "not a CIDR block"),
    ("", "not a CIDR block"), ("example.com", "not a CIDR block"),
    ("0.0.0.0/0", "too wide"), ("10.0.0.0/7", "too wide"), ("2001:db8::/15", "too wide"),
    ("::/0", "too wide")])
def test_invalid_rules_are_refused_with_their_index(cidr: str, message: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        normalise_rules([Rule("10.0.0.0/8"), Rule(cidr)], 0)
    assert message in caught.value.message and caught.value.message.startswith("rules[1]")
    field = caught.value.to_wire()["details"][0]["fieldViolations"][0]["field"]
    assert field == "parameters.rules[1].cidr"


def test_the_number_of_rules_is_bounded() -> None:
    normalise_rules([Rule(f"10.0.{i // 256}.{i % 256}") for i in range(ip_allowlist.MAX_RULES)], 0)
    with pytest.raises(InvalidRequest, match="at most"):
        normalise_rules([Rule(f"10.0.{i // 256}.{i % 256}")
                         for i in range(ip_allowlist.MAX_RULES + 1)], 0)


def test_a_rule_set_allows_addresses_in_its_blocks_and_evaluation_errors_as_configured() -> None:
    networks = (_network("127.0.0.2/32"), _network("2001:db8::/32"))
    deny = RuleSet("list", networks, "DENY")
    allow = RuleSet("list", networks, "ALLOW")
    assert deny.allows("127.0.0.2") and deny.allows("::ffff:127.0.0.2")
    assert deny.allows("2001:db8::5") and deny.allows("[2001:db8::5]")
    assert not deny.allows("127.0.0.3") and not deny.allows("2001:db9::1")
    for unknown in (None, "", "garbage", "999.1.1.1"):
        assert not deny.allows(unknown) and allow.allows(unknown)
    assert not allow.allows("127.0.0.3")  # a valid address outside is refused either way
    assert not RuleSet("empty", (), "DENY").allows("127.0.0.2")


def test_the_client_address_follows_the_forwarded_hops() -> None:
    assert client_address_of("10.0.0.1", "1.2.3.4", 0) == "10.0.0.1"
    assert client_address_of("10.0.0.1", "1.2.3.4", 1) == "1.2.3.4"
    assert client_address_of("10.0.0.1", "9.9.9.9, 1.2.3.4", 1) == "1.2.3.4"
    assert client_address_of("10.0.0.1", "9.9.9.9, 1.2.3.4", 2) == "9.9.9.9"
    assert client_address_of("10.0.0.1", None, 1) == "10.0.0.1"
