"""A real embedded composition on SQLite (migrated) with the in-process StubBroker.

No sockets: submissions go straight to ``infra.pipeline.submit.submit`` with a body stamped by
the official ``turnkey-api-key-stamper``; actors are called directly or run by real
dramatiq workers on the StubBroker, the way ``walletd up`` runs them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from infra.bootstrap import Services, bootstrap
from infra.db.migrate import upgrade
from infra.identity.root import KEY_FILE, ensure_root
from infra.pipeline.submit import submit
from infra.settings import Settings
from tests.support.keys import make_key


@dataclass
class Pipeline:
    services: Services
    root: dict[str, str]

    def stamped(self, body: dict[str, Any]) -> tuple[dict[str, str], bytes]:
        from turnkey_api_key_stamper import ApiKeyStamper, ApiKeyStamperConfig

        text = json.dumps(body)
        stamper = ApiKeyStamper(ApiKeyStamperConfig(self.root["apiPublicKey"],
                                                    self.root["apiPrivateKey"]))
        stamp = stamper.stamp(text)
        return {stamp.stamp_header_name: stamp.stamp_header_value}, text.encode()

    def submit_create_api_key(self) -> tuple[str, str]:
        """Submit a create_api_keys (nobody consumes the broker): (activity id, public key)."""
        key = make_key()
        headers, body = self.stamped({
            "type": "ACTIVITY_TYPE_CREATE_API_KEYS_V2",
            "timestampMs": str(int(time.time() * 1000)),
            "organizationId": self.root["organizationId"],
            "parameters": {"userId": self.root["userId"],
                           "apiKeys": [key.api_key_params("unit", "3600")]},
        })
        answer = submit(self.services, "create_api_keys", headers, body)
        assert answer["status"] == "ACTIVITY_STATUS_PENDING"
        return answer["id"], key.public_key


@pytest.fixture
def pipeline(tmp_path: Path) -> Iterator[Pipeline]:
    settings = Settings.from_env({"WALLETD_DATA_DIR": str(tmp_path), "WALLETD_BROKER_URL": "memory://",
                                  "WALLETD_SYNC_WAIT_MS": "0", "WALLETD_WORKER_THREADS": "1"})
    upgrade(settings.effective_database_url)
    services = bootstrap(settings, "embedded")
    ensure_root(services.uow, services.settings)
    root = json.loads((tmp_path / KEY_FILE).read_text())
    yield Pipeline(services, root)
    services.engine.dispose()
