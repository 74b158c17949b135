"""An in-process webhook world for tests: services over a fresh SQLite database, a stub
broker, a root organization with one sub-organization, and the notifier, called directly."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from infra.bootstrap import Services, bootstrap
from infra.clock import new_id, now
from infra.db.activity_rows import ActivityRow
from infra.db.migrate import upgrade
from infra.db.models.webhooks import WebhookEndpoint
from infra.identity.root import create_organization, new_p256_keypair
from infra.pipeline import lifecycle, store
from infra.settings import Settings
from notifier.actors import Notifier, build_notifier
from notifier.delivery import DeliveryConfig


@dataclass
class World:
    """Services, a root organization with one sub-organization, and the notifier."""

    services: Services
    notifier: Notifier
    root_id: str
    sub_id: str

    def add_endpoint(self, organization_id: str, url: str, **kw: object) -> str:
        endpoint_id = new_id()
        with self.services.uow() as uow:
            uow.session.add(
                WebhookEndpoint(
                    id=endpoint_id,
                    organization_id=organization_id,
                    url=url,
                    name=str(kw.get("name", "hook")),
                    is_active=True,
                    subscriptions=kw.get(
                        "subscriptions", [{"eventType": "ACTIVITY_UPDATES", "isActive": True}]
                    ),
                )
            )
            uow.commit()
        return endpoint_id

    def submit(self, organization_id: str, *, commit: bool = True) -> str:
        """Insert a PENDING activity the way ingress does (listener included)."""
        activity_id = new_id()
        body = f'{{"n":"{activity_id}"}}'
        with self.services.uow() as uow:
            moment = now()
            activity = ActivityRow(
                id=activity_id,
                organization_id=organization_id,
                type="ACTIVITY_TYPE_UPDATE_USER_NAME",
                status=lifecycle.PENDING,
                fingerprint="sha256:" + hashlib.sha256(body.encode()).hexdigest(),
                body=body,
                timestamp_ms="1",
                intent={"updateUserNameIntent": {"userId": "u", "userName": "n"}},
                result={},
                failure=None,
                user_id=None,
                version=1,
                created_at=moment,
                updated_at=moment,
            )
            store.accept(uow, activity)
            if commit:
                uow.commit()
        return activity_id

    def complete(self, activity_id: str) -> None:
        with self.services.uow() as uow:
            activity = store.claim_status(uow.session, activity_id, lifecycle.PENDING)
            assert activity is not None
            store.transition(
                uow, activity, lifecycle.COMPLETED, result={"updateUserNameResult": {}}
            )
            uow.commit()


def build_world(tmp_path: Path, *, database_url: str = "") -> World:
    """Migrate a fresh SQLite database under ``tmp_path`` and build everything on it."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=database_url,
        broker_url="memory://",
        webhook_allow=("127.0.0.1",),
        master_key_file=str(tmp_path / "data" / "master-keys.json"),
    )
    settings.data_dir.mkdir(parents=True)
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "worker")
    with services.uow() as uow:
        root, _ = create_organization(uow.session, "root", new_p256_keypair()[1])
        sub, _ = create_organization(uow.session, "sub", new_p256_keypair()[1], parent_id=root.id)
        uow.commit()
        root_id, sub_id = root.id, sub.id
    config = DeliveryConfig(connect_timeout_s=2, read_timeout_s=2, transport_wait_max_s=0.05)
    # One attempt per ``deliver_webhook`` call (tests drive the actor directly); runs that go
    # on to the endpoint's next rows are tested with their own budget.
    notifier = build_notifier(services, config=config, run_budget_s=0.0)
    return World(services, notifier, root_id, sub_id)


@contextmanager
def running_world(tmp_path: Path, *, database_url: str = "") -> Iterator[World]:
    """:func:`build_world`, its listeners and engine closed when the block ends (a listener
    left running on a dropped database would keep every process-wide cache of a later world
    from trusting what it remembered)."""
    world = build_world(tmp_path, database_url=database_url)
    try:
        yield world
    finally:
        world.services.stop_listening()
        world.services.engine.dispose()
