"""Send-transaction status rows: created with the activity, rendered for the wire, announced.

Statuses (Turnkey's): ``INITIALIZED`` (signed, not yet broadcast), ``BROADCASTING`` (sent,
waiting for inclusion), ``INCLUDED`` (in a block; confirmed for Solana), ``FAILED`` (will not
be included: refused by the node, failed pre-flight, included and reverted, or given up by
the replacement bounds of ``infra.broadcast.bounds``, the error naming the rule). Every change is
announced to ``SEND_TRANSACTION_STATUS_UPDATES`` webhook endpoints in its own transaction.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from infra.clock import new_id
from infra.db.models.broadcast import SendTransaction
from infra.db.unit_of_work import UnitOfWork
from infra.errors import NotFound
from infra.webhooks.outbox import endpoints_for, enqueue_and_dispatch
from infra.webhooks.payloads import (
    EVENT_NAMESPACE,
    SEND_TRANSACTION_STATUS_UPDATES,
    WebhookEvent,
    encode_body,
)

INITIALIZED, BROADCASTING, INCLUDED, FAILED = "INITIALIZED", "BROADCASTING", "INCLUDED", "FAILED"
OPEN = (INITIALIZED, BROADCASTING)


def create(uow: UnitOfWork, *, organization_id: str, activity_id: str, caip2: str, chain: str,
           sender: str, nonce: int | None, unsigned: dict[str, Any], raw: str, tx_hash: str,
           now: datetime, failure: dict[str, Any] | None = None,
           first_fees: dict[str, Any] | None = None) -> SendTransaction:
    """Store a signed transaction (or a pre-flight failure) in the activity's transaction;
    ``first_fees``: the Ethereum fees it was signed with (``infra.broadcast.bounds``)."""
    row = SendTransaction(
        id=new_id(), organization_id=organization_id, activity_id=activity_id, caip2=caip2,
        chain=chain, from_address=sender, nonce=nonce,
        status=FAILED if failure is not None else INITIALIZED, unsigned=unsigned,
        raw_transaction=raw, tx_hash=tx_hash, hashes=[tx_hash] if tx_hash else [],
        error=failure, attempts=0, replacements=0, first_fees=first_fees,
        next_check_at=now, version=1,
        created_at=now, updated_at=now)
    uow.session.add(row)
    uow.session.flush()
    announce(uow, row)
    return row


def in_org(session: Session, organization_id: str, status_id: str) -> SendTransaction:
    """The organization's status row, or a 404."""
    row = session.get(SendTransaction, status_id)
    if row is None or row.organization_id != organization_id:
        raise NotFound(f"send transaction status not found: {status_id}")
    return row


def render(row: SendTransaction) -> dict[str, Any]:
    """``v1GetSendTransactionStatusResponse``."""
    body: dict[str, Any] = {"txStatus": row.status}
    if row.chain == "eth" and row.tx_hash:
        body["eth"] = {"txHash": row.tx_hash}
    if row.chain == "solana" and row.tx_hash:
        body["solana"] = {"signature": row.tx_hash}
    if row.error:
        body["txError"] = str(row.error.get("message", ""))
        body["error"] = dict(row.error)
    return body


def failure(message: str, revert_chain: list[dict[str, Any]] | None = None,
            solana: dict[str, Any] | None = None) -> dict[str, Any]:
    """``v1TxError``."""
    error: dict[str, Any] = {"message": message}
    if revert_chain:
        error["revertChain"] = revert_chain
        error["eth"] = {"revertChain": revert_chain}
    if solana:
        error["solana"] = solana
    return error


def move(uow: UnitOfWork, row: SendTransaction, status: str, *, now: datetime,
         delay_s: float = 0.0, **changes: Any) -> None:
    """Record a status change (announced when the status differs) and the next look."""
    previous = row.status
    for name, value in changes.items():
        setattr(row, name, value)
    row.status = status
    row.version += 1
    row.updated_at = now
    row.next_check_at = now + timedelta(seconds=delay_s)
    row.lease_until = None
    uow.session.flush()
    if previous != status:
        announce(uow, row)


def announce(uow: UnitOfWork, row: SendTransaction) -> None:
    """Write the ``SEND_TRANSACTION_STATUS_UPDATES`` outbox rows for the row's status."""
    endpoints = endpoints_for(uow.session, row.organization_id, SEND_TRANSACTION_STATUS_UPDATES)
    if not endpoints:
        return
    key = str(uuid.uuid5(EVENT_NAMESPACE,
                         f"{SEND_TRANSACTION_STATUS_UPDATES}:{row.id}:{row.status}"))
    msg = {"idempotencyKey": key, "organizationId": row.organization_id,
           "sendTransactionStatusId": row.id, "activityId": row.activity_id,
           "caip2": row.caip2, "from": row.from_address, **render(row),
           "updatedAt": str(int(row.updated_at.timestamp() * 1000))}
    if row.block_number is not None:
        msg["blockNumber"] = str(row.block_number)
    event = WebhookEvent(event_id=key, event_type=SEND_TRANSACTION_STATUS_UPDATES,
                         organization_id=row.organization_id,
                         body=encode_body({"type": SEND_TRANSACTION_STATUS_UPDATES, "msg": msg}))
    enqueue_and_dispatch(uow, event, endpoints)
