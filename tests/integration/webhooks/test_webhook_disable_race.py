"""Two deliveries to one endpoint failing at the same moment disable it once (PostgreSQL,
two real transactions interleaved): one UPDATE_WEBHOOK_ENDPOINT activity, not two."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, select, update

from infra.clock import now
from infra.db.models.activities import Activity
from infra.db.models.webhooks import WebhookEndpoint
from notifier.actors import _Claim, _update_health
from notifier.delivery import AttemptRecord
from tests.support.webhook_world import running_world


def test_concurrent_failures_disable_an_endpoint_once(tmp_path: Path, fresh_pg_url: str) -> None:
    with running_world(tmp_path, database_url=fresh_pg_url) as world:
        endpoint_id = world.add_endpoint(world.root_id, "https://hooks.example/")
        since = now() - timedelta(days=6)
        with world.services.uow() as uow:
            uow.session.execute(
                update(WebhookEndpoint).where(WebhookEndpoint.id == endpoint_id).values(failing_since=since)
            )
            uow.commit()
        claim = _Claim(
            url="https://hooks.example/", body=b"{}", event_id="e", event_type="ACTIVITY_UPDATES",
            subject_organization_id=world.root_id, endpoint_id=endpoint_id, attempts=3,
            schedule_attempts=3, failing_since=since, token="t",
        )
        failed = AttemptRecord(started_at_ms=int(time.time() * 1000), latency_ms=1.0, status_code=503)

        second_result: list[BaseException | None] = []

        def second() -> None:
            try:
                with world.services.uow() as uow:
                    _update_health(world.notifier, uow, claim, failed, now())
                    uow.commit()
                second_result.append(None)
            except BaseException as exc:  # reported below
                second_result.append(exc)

        with world.services.uow() as uow:
            _update_health(world.notifier, uow, claim, failed, now())
            # The first transaction has disabled the endpoint but not committed yet: the second
            # one starts now and must not disable it again.
            racer = threading.Thread(target=second)
            racer.start()
            racer.join(timeout=0.5)
            uow.commit()
        racer.join(timeout=30)
        assert second_result == [None]

        with world.services.session_factory() as session:
            endpoint = session.get(WebhookEndpoint, endpoint_id)
            assert endpoint is not None and endpoint.is_active is False
            recorded = session.scalar(
                select(func.count()).select_from(Activity).where(
                    Activity.organization_id == world.root_id,
                    Activity.type == "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT",
                )
            )
        assert recorded == 1
