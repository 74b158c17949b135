"""``walletd webhooks``: operating the notifier.

    walletd webhooks replay --id DELIVERY [--id ...]
    walletd webhooks replay --since ISO [--until ISO] [--organization ORG] [--endpoint EP]
                                    put failed deliveries back in the queue (never a
                                    succeeded one); the running notifier sends them
    walletd webhooks rotate-key [--overlap-hours H]
                                    add a signing key: published in the JWKS now, signing
                                    after H hours (default 24, one JWKS max-age); the old key
                                    stays published H hours longer. 0 = emergency switch.
    walletd webhooks status         deliveries by state, and disabled endpoints
    walletd webhooks failed [--organization ORG] [--limit N]
                                    failed deliveries (newest first) with their last answer,
                                    and the attempt log of each

Running notifier processes re-read the key ring file when it changes.
"""

from __future__ import annotations

import argparse
from datetime import datetime

from sqlalchemy import func, select

from infra.bootstrap import Services, bootstrap
from infra.clock import now_ms
from infra.db.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from infra.seal.holders import rotate_webhook_keys
from infra.settings import Settings
from infra.webhooks import keystore
from infra.webhooks.replay import replay_failed
from walletd.operator import unsealed


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``webhooks`` subcommands."""
    parser.add_argument("--data-dir")
    sub = parser.add_subparsers(dest="webhooks_command", required=True)
    replay = sub.add_parser("replay", help="re-send failed deliveries by id or time range")
    replay.add_argument("--id", action="append", default=[], dest="ids")
    # ISO 8601; no offset means UTC (``replay_failed`` converts to UTC).
    replay.add_argument("--since", type=datetime.fromisoformat)
    replay.add_argument("--until", type=datetime.fromisoformat)
    replay.add_argument("--organization")
    replay.add_argument("--endpoint")
    rotate = sub.add_parser("rotate-key", help="add a webhook signing key (with overlap)")
    rotate.add_argument("--overlap-hours", type=float, default=24.0)
    sub.add_parser("status", help="deliveries by state and disabled endpoints")
    failed = sub.add_parser("failed", help="failed deliveries and their attempts")
    failed.add_argument("--organization")
    failed.add_argument("--limit", type=int, default=50)


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Dispatch ``walletd webhooks <command>``."""
    services = bootstrap(settings, "cli")
    if args.webhooks_command == "replay":
        with services.uow() as uow:
            ids = replay_failed(
                uow.session,
                delivery_ids=args.ids,
                since=args.since,
                until=args.until,
                organization_id=args.organization,
                endpoint_id=args.endpoint,
            )
            uow.commit()
        print(f"replaying {len(ids)} failed deliveries")
        for delivery_id in ids:
            print(delivery_id)
        return 0
    if args.webhooks_command == "rotate-key":
        ring = rotate_webhook_keys(unsealed(services), now_ms=now_ms(),
                                   overlap_ms=int(args.overlap_hours * 3_600_000))
        with services.uow() as uow:
            keystore.publish(uow.session, ring)
            uow.commit()
        newest = max(ring.keys, key=lambda k: k.activates_at_ms)
        print(f"added webhook signing key {newest.key_id}; signs from {newest.activates_at_ms}")
        return 0
    if args.webhooks_command == "failed":
        return _print_failed(services, args.organization, args.limit)
    with services.session_factory() as session:
        counts = session.execute(
            select(WebhookDelivery.status, func.count()).group_by(WebhookDelivery.status)
        ).all()
        disabled = session.scalars(
            select(WebhookEndpoint).where(WebhookEndpoint.disabled_at.is_not(None))
        ).all()
    for state, count in sorted(counts):
        print(f"{state:10} {count}")
    for endpoint in disabled:
        print(f"disabled endpoint {endpoint.id} ({endpoint.url}): {endpoint.disabled_reason}")
    return 0


def _print_failed(services: Services, organization_id: str | None, limit: int) -> int:
    query = (
        select(WebhookDelivery)
        .where(WebhookDelivery.status == "FAILED")
        .order_by(WebhookDelivery.created_at.desc())
        .limit(limit)
    )
    if organization_id:
        query = query.where(WebhookDelivery.organization_id == organization_id)
    with services.session_factory() as session:
        for delivery in session.scalars(query):
            print(
                f"{delivery.id} endpoint={delivery.endpoint_id} event={delivery.event_id} "
                f"created={delivery.created_at.isoformat()} attempts={delivery.attempts} "
                f"last={delivery.last_status_code} {delivery.last_error or ''}".rstrip()
            )
            attempts = session.scalars(
                select(WebhookAttempt)
                .where(WebhookAttempt.delivery_id == delivery.id)
                .order_by(WebhookAttempt.started_at)
            )
            for attempt in attempts:
                excerpt = attempt.response_excerpt[:80].replace("\n", " ")
                print(
                    f"  #{attempt.number} {attempt.started_at.isoformat()} "
                    f"status={attempt.status_code} {attempt.latency_ms:.0f}ms "
                    f"{attempt.error or excerpt}"
                )
    return 0


COMMAND = (configure, run)
