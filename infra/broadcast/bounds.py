"""Bounds on replacing a stuck Ethereum transaction: how often, how high, from what advice.

A stuck transaction is re-signed with higher fees (``infra.broadcast.tracker``), and every
bound here is something that re-signing must stay under, whatever the node says:

- at most ``WALLETD_BROADCAST_MAX_REPLACEMENTS`` replacements (default 5);
- ``maxFeePerGas`` and ``maxPriorityFeePerGas`` at most ``WALLETD_BROADCAST_FEE_CAP_MULTIPLE``
  (default 3) times those of the first signature (:attr:`Limits.max_fee`, ``max_tip``);
- a fee the node suggests (its base fee doubled plus its ``eth_maxPriorityFeePerGas``) is used
  only when it is at most ``WALLETD_BROADCAST_SUGGESTED_FEE_MAX_GWEI`` (default 1000 gwei)
  and within the transaction's ceiling; otherwise it is ignored (logged and counted) and the
  tracker's own bump of 12.5 % applies.

When the next replacement cannot stay under the ceiling, the transaction is given up
(:class:`GiveUp`, whose ``reason`` names the rule). Pure arithmetic; no I/O.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from typing import Any

from infra.settings import Settings

log = logging.getLogger(__name__)

GWEI = 10**9
BUMP_NUMERATOR, BUMP_DENOMINATOR = 9, 8  # +12.5 % (nodes require 10 % to replace)


@dataclass(frozen=True)
class Fees:
    """EIP-1559 fees per gas, in wei."""

    max_fee: int
    tip: int

    @classmethod
    def of(cls, unsigned: dict[str, Any]) -> Fees:
        """The fees of signed fields (``maxFeePerGas``, ``maxPriorityFeePerGas``)."""
        return cls(int(unsigned["maxFeePerGas"]), int(unsigned["maxPriorityFeePerGas"]))

    @classmethod
    def stored(cls, value: dict[str, Any] | None) -> Fees | None:
        """Fees stored as decimal strings (``send_transactions.first_fees``)."""
        if not value:
            return None
        return cls(int(value["maxFeePerGas"]), int(value["maxPriorityFeePerGas"]))

    def to_stored(self) -> dict[str, str]:
        return {"maxFeePerGas": str(self.max_fee), "maxPriorityFeePerGas": str(self.tip)}

    def describe(self) -> str:
        return f"maxFeePerGas {_gwei(self.max_fee)}, maxPriorityFeePerGas {_gwei(self.tip)}"


def _gwei(wei: int) -> str:
    return f"{wei / GWEI:.9g} gwei"


def suggestion_limit(settings: Settings) -> int:
    """The sanity bound on node-suggested fees, in wei per gas."""
    return int(settings.broadcast_suggested_fee_max_gwei * GWEI)


@dataclass(frozen=True)
class Limits:
    """What one transaction's replacements must stay under."""

    max_replacements: int
    max_fee: int
    max_tip: int
    #: A node suggestion above this (wei per gas, for the fee and the tip) is not used.
    suggestion_limit: int

    @classmethod
    def of(cls, settings: Settings, first: Fees) -> Limits:
        multiple = settings.broadcast_fee_cap_multiple
        max_fee = int(first.max_fee * multiple)
        max_tip = int(first.tip * multiple)
        return cls(settings.broadcast_max_replacements, max_fee, max_tip,
                   min(suggestion_limit(settings), max_fee))


@dataclass(frozen=True)
class GiveUp:
    """No replacement may be signed; ``rule`` names the bound, ``reason`` says it in full."""

    rule: str
    reason: str


@dataclass(frozen=True)
class Replacement:
    """The fees of the next replacement; ``ignored`` says why the node's advice was not used."""

    fees: Fees
    ignored: str = ""


def replacement(current: Fees, suggestion: Fees | None, replacements: int,
                limits: Limits) -> Replacement | GiveUp:
    """The fees of the next replacement of a transaction signed with ``current``, or why none.

    The tip and the fee rise by at least 12.5 %, to the node's ``suggestion`` when that is
    higher and within the bounds; the result never exceeds the transaction's ceiling.
    """
    if replacements >= limits.max_replacements:
        return GiveUp("WALLETD_BROADCAST_MAX_REPLACEMENTS", (
            f"gave up replacing the stuck transaction: it was replaced {replacements} times, "
            f"the limit (WALLETD_BROADCAST_MAX_REPLACEMENTS={limits.max_replacements})"))
    tip = current.tip * BUMP_NUMERATOR // BUMP_DENOMINATOR + 1
    fee = max(current.max_fee * BUMP_NUMERATOR // BUMP_DENOMINATOR + 1, tip)
    ignored = ""
    if suggestion is not None:
        ignored = refused(suggestion, limits.suggestion_limit, min(limits.max_tip,
                                                                   limits.suggestion_limit))
        if not ignored:
            tip = max(tip, suggestion.tip)
            fee = max(fee, suggestion.max_fee, tip)
    if fee > limits.max_fee or tip > limits.max_tip:
        return GiveUp("WALLETD_BROADCAST_FEE_CAP_MULTIPLE", (
            f"gave up replacing the stuck transaction: the next replacement needs "
            f"{Fees(fee, tip).describe()}, above its ceiling of {limits.max_fee} / "
            f"{limits.max_tip} wei (WALLETD_BROADCAST_FEE_CAP_MULTIPLE times the first "
            "signature's fees)"))
    return Replacement(Fees(fee, tip), ignored)


def refused(suggestion: Fees, fee_limit: int, tip_limit: int) -> str:
    """Why a node's suggested fees are not used ("" when they are within the limits)."""
    if suggestion.tip > tip_limit:
        return (f"the node suggests a priority fee of {_gwei(suggestion.tip)}, above the "
                f"limit of {_gwei(tip_limit)}")
    if suggestion.max_fee > fee_limit:
        return (f"the node's base fee implies a maxFeePerGas of {_gwei(suggestion.max_fee)}, "
                f"above the limit of {_gwei(fee_limit)}")
    return ""


@functools.cache
def _counter() -> Any:
    """``walletd_broadcast_bounds_total{rule}``, made on first use (after the process set
    its metrics directory, see ``infra.observability.metrics``)."""
    from prometheus_client import Counter

    return Counter("walletd_broadcast_bounds",
                   "Times a bound on transaction replacement acted, by rule.", ["rule"])


def note(rule: str) -> None:
    """Count one action of ``rule`` (suggestion_ignored, nonce_gap, a give-up's rule)."""
    _counter().labels(rule=rule).inc()
