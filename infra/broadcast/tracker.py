"""The tracker: broadcast stored transactions and follow them to inclusion.

Runs in the signing workers (it re-signs stuck transactions, so it needs the keys). Each pass
takes the due rows (``INITIALIZED`` or ``BROADCASTING``, ``next_check_at`` passed), leases one
at a time (``lease_until``; a tracker that dies mid-step leaves the row to another after the
lease), talks to the node outside any database transaction, then records what it learnt.

Exactly once on chain: the signed transaction is committed with its activity before anything
is sent, and every send after a crash re-sends those same bytes (same nonce, same hash), which
a node either accepts once or answers "already known". A replacement is committed (added to
``hashes``) before it is sent, so whichever of the hashes the chain includes is found.
"""

from __future__ import annotations

import functools
import logging
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import or_, select, update

from infra.broadcast import bounds, ethereum, reapproval, solana, status
from infra.broadcast.rpc import ChainRpc, NodeUnavailable, RpcError, chain, quantity
from infra.clock import now
from infra.db.models.broadcast import SendTransaction
from infra.services import Services
from infra.wallets import store
from infra.worker_services import custody_of

log = logging.getLogger(__name__)

BATCH = 50
MAX_BACKOFF_S = 30.0
_KNOWN = ("already known", "known transaction", "already imported", "alreadyprocessed",
          "already been processed")


def _backoff(attempts: int) -> float:
    return min(MAX_BACKOFF_S, 0.5 * 2 ** min(attempts, 6))


def due(services: Services, moment: datetime) -> list[str]:
    """Ids of the rows to look at now."""
    with services.read_session_factory() as session:
        return list(session.scalars(
            select(SendTransaction.id).where(
                SendTransaction.status.in_(status.OPEN),
                SendTransaction.next_check_at <= moment,
                or_(SendTransaction.lease_until.is_(None),
                    SendTransaction.lease_until < moment))
            .order_by(SendTransaction.next_check_at).limit(BATCH)))


def _lease(services: Services, row_id: str, moment: datetime) -> SendTransaction | None:
    """Take the row for one step; ``None`` when another tracker has it."""
    with services.uow() as uow:
        result: Any = uow.session.execute(
            update(SendTransaction).where(
                SendTransaction.id == row_id, SendTransaction.status.in_(status.OPEN),
                or_(SendTransaction.lease_until.is_(None),
                    SendTransaction.lease_until < moment))
            .values(lease_until=moment + timedelta(
                seconds=services.settings.broadcast_lease_s)))
        if result.rowcount != 1:
            return None
        row = uow.session.get(SendTransaction, row_id)
        uow.commit()
        return row


def _record(services: Services, row_id: str, new_status: str, *, delay_s: float = 0.0,
            **changes: Any) -> None:
    with services.uow() as uow:
        row = uow.session.get(SendTransaction, row_id, with_for_update=True)
        if row is None or row.status not in status.OPEN:
            return
        status.move(uow, row, new_status, now=now(), delay_s=delay_s, **changes)
        uow.commit()


def _key_for(services: Services, row: SendTransaction) -> bytes:
    with services.read_session_factory() as session:
        target = store.resolve_sign_with(session, row.organization_id, row.from_address)
        return store.signing_secret(custody_of(services), target)


def _is_known(ex: RpcError) -> bool:
    return any(marker in ex.message.lower().replace(" ", "") or marker in ex.message.lower()
               for marker in _KNOWN)


def _eth_receipt(rpc: ChainRpc, row: SendTransaction) -> tuple[str, dict[str, Any]] | None:
    for tx_hash in reversed(row.hashes):
        receipt = rpc.call("eth_getTransactionReceipt", [tx_hash])
        if isinstance(receipt, dict) and receipt.get("blockNumber"):
            return tx_hash, receipt
    return None


def _eth_included(services: Services, rpc: ChainRpc, row: SendTransaction, tx_hash: str,
                  receipt: dict[str, Any]) -> None:
    block = quantity(receipt["blockNumber"])
    if quantity(receipt.get("status", "0x1")) == 1:
        _record(services, row.id, status.INCLUDED, tx_hash=tx_hash, block_number=block)
        return
    chain_ = ethereum.replay_revert(rpc, row.unsigned, row.from_address, block)
    _record(services, row.id, status.FAILED, tx_hash=tx_hash, block_number=block,
            error=status.failure(chain_[0]["displayMessage"], chain_))


def _eth_send(services: Services, rpc: ChainRpc, row: SendTransaction) -> None:
    try:
        rpc.call("eth_sendRawTransaction", [row.raw_transaction])
    except RpcError as ex:
        if _is_known(ex):
            pass
        elif "nonce too low" in ex.message.lower():
            found = _eth_receipt(rpc, row)
            if found is not None:
                _eth_included(services, rpc, row, *found)
                return
            _record(services, row.id, status.FAILED, error=status.failure(
                f"nonce {row.nonce} was used by another transaction of {row.from_address}"))
            return
        else:
            _record(services, row.id, status.FAILED,
                    error=status.failure(f"the node refused the transaction: {ex.message}"))
            return
    _record(services, row.id, status.BROADCASTING, delay_s=_poll(services),
            broadcast_at=now(), attempts=row.attempts + 1)


def _poll(services: Services) -> float:
    return services.settings.broadcast_poll_ms / 1000


def _resend_if_forgotten(rpc: ChainRpc, row: SendTransaction) -> None:
    """The node forgot the transaction (restart, eviction): send the same bytes again."""
    if rpc.call("eth_getTransactionByHash", [row.tx_hash]) is not None:
        return
    try:
        rpc.call("eth_sendRawTransaction", [row.raw_transaction])
    except RpcError as ex:
        if "nonce too low" not in ex.message.lower() and not _is_known(ex):
            log.info("re-broadcast of %s refused: %s", row.tx_hash, ex.message)


def _give_up(services: Services, row: SendTransaction, rule: str, reason: str) -> None:
    """End the row ``FAILED`` with ``reason``: no further replacement is signed."""
    bounds.note(rule)
    log.warning("send transaction %s (nonce %s) given up: %s", row.id, row.nonce, reason)
    _record(services, row.id, status.FAILED, error=status.failure(
        f"{reason}; the last transaction sent ({row.tx_hash}) may still be included"))


def _suggestion(rpc: ChainRpc) -> bounds.Fees | None:
    try:
        return bounds.Fees(*ethereum.suggested_fees(rpc))
    except NodeUnavailable as ex:  # no advice: the tracker's own bump applies
        log.info("no fee suggestion from the %s node: %s", rpc.caip2, ex)
        return None


def _eth_replace(services: Services, rpc: ChainRpc, row: SendTransaction) -> None:
    """Re-sign with higher fees within the bounds, if the policies allow the new transaction;
    committed before it is sent. Past a bound, or denied, the transaction is given up."""
    current = bounds.Fees.of(row.unsigned)
    first = bounds.Fees.stored(row.first_fees) or current
    limits = bounds.Limits.of(services.settings, first)
    decided = bounds.replacement(current, _suggestion(rpc), row.replacements, limits)
    if isinstance(decided, bounds.GiveUp):
        _give_up(services, row, decided.rule, decided.reason)
        return
    if decided.ignored:
        bounds.note("suggestion_ignored")
        log.warning("send transaction %s: node fee suggestion not used: %s", row.id,
                    decided.ignored)
    unsigned = {**row.unsigned, "maxFeePerGas": decided.fees.max_fee,
                "maxPriorityFeePerGas": decided.fees.tip}
    with services.read_session_factory() as session:
        verdict = reapproval.verdict(session, row.activity_id, unsigned, row.created_at)
    if not verdict.allowed:
        _give_up(services, row, "policy", (
            f"gave up replacing the stuck transaction: the policies do not allow the "
            f"replacement ({decided.fees.describe()}): {reapproval.explained(verdict)}"))
        return
    raw, tx_hash = ethereum.sign(unsigned, _key_for(services, row))
    log.info("replacing stuck transaction %s (nonce %s) with %s", row.tx_hash, row.nonce, tx_hash)
    _record(services, row.id, status.BROADCASTING, delay_s=_poll(services), unsigned=unsigned,
            raw_transaction=raw, tx_hash=tx_hash, hashes=[*row.hashes, tx_hash],
            replacements=row.replacements + 1, broadcast_at=now(),
            first_fees=first.to_stored())
    try:
        rpc.call("eth_sendRawTransaction", [raw])
    except RpcError as ex:  # underpriced: the next pass bumps again
        if not _is_known(ex):
            log.info("replacement %s not accepted yet: %s", tx_hash, ex.message)


def _eth_stuck(services: Services, rpc: ChainRpc, row: SendTransaction) -> None:
    """Unincluded past ``broadcast_stuck_s``: replace it, unless a lower nonce of the same
    address is not confirmed yet (re-signing cannot help behind a gap: it waits, and its
    stuck clock starts again)."""
    confirmed = quantity(rpc.call("eth_getTransactionCount", [row.from_address, "latest"]))
    nonce = row.nonce if row.nonce is not None else confirmed
    if confirmed < nonce:
        bounds.note("nonce_gap")
        log.info("send transaction %s (nonce %s) waits behind unconfirmed nonce %s of %s",
                 row.id, nonce, confirmed, row.from_address)
        _resend_if_forgotten(rpc, row)
        _record(services, row.id, status.BROADCASTING, delay_s=_poll(services),
                broadcast_at=now())
        return
    if confirmed > nonce:  # the nonce is used: by one of ours (a receipt now), or not
        found = _eth_receipt(rpc, row)
        if found is not None:
            _eth_included(services, rpc, row, *found)
        else:
            _record(services, row.id, status.FAILED, error=status.failure(
                f"nonce {nonce} was used by another transaction of {row.from_address}"))
        return
    _eth_replace(services, rpc, row)


def _eth_follow(services: Services, rpc: ChainRpc, row: SendTransaction) -> None:
    found = _eth_receipt(rpc, row)
    if found is not None:
        _eth_included(services, rpc, row, *found)
        return
    stuck = timedelta(seconds=services.settings.broadcast_stuck_s)
    sent_at = row.broadcast_at
    if sent_at is not None and sent_at.tzinfo is None:  # SQLite keeps no offset: stored as UTC
        sent_at = sent_at.replace(tzinfo=UTC)
    if sent_at is not None and now() - sent_at >= stuck:
        _eth_stuck(services, rpc, row)
        return
    _resend_if_forgotten(rpc, row)
    _record(services, row.id, status.BROADCASTING, delay_s=_poll(services))


def step(services: Services, row: SendTransaction) -> None:
    """One step of one row: send, follow, replace or settle it."""
    rpc = chain(services.settings, row.caip2)
    if row.chain == "solana":
        solana.step(rpc, row, functools.partial(_record, services), _poll(services))
    elif row.status == status.INITIALIZED:
        _eth_send(services, rpc, row)
    else:
        _eth_follow(services, rpc, row)


def run_once(services: Services) -> int:
    """One pass over the due rows; how many were looked at."""
    moment = now()
    seen = 0
    for row_id in due(services, moment):
        row = _lease(services, row_id, moment)
        if row is None:
            continue
        seen += 1
        try:
            step(services, row)
        except (NodeUnavailable, RpcError) as ex:
            log.info("send transaction %s: node not usable now (%s); retrying", row.id, ex)
            _record(services, row.id, row.status, delay_s=_backoff(row.attempts),
                    attempts=row.attempts + 1)
        except Exception:
            log.exception("send transaction %s: step failed; retrying after the lease", row.id)
    return seen


def start(services: Services, stop: threading.Event) -> threading.Thread:
    """Run passes every ``broadcast_poll_ms`` in a daemon thread until ``stop`` is set."""
    interval = max(services.settings.broadcast_poll_ms, 50) / 1000

    def loop() -> None:
        while not stop.wait(interval):
            if not services.settings.chain_rpc:
                continue
            try:
                run_once(services)
            except Exception:
                log.exception("broadcast pass failed; retrying next interval")

    thread = threading.Thread(target=loop, name="walletd-broadcast", daemon=True)
    thread.start()
    return thread
