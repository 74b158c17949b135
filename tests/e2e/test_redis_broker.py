"""The production path with Redis as the broker instead of RabbitMQ."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from turnkey_sdk_types import CreateApiKeysBody, GetApiKeyBody, GetWhoamiBody

from tests.support import services
from tests.support.deployment import Deployment
from tests.support.keys import make_key


@pytest.fixture(scope="module")
def redis_deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    db = services.create_database()
    dep = Deployment.production(Path(tmp_path_factory.mktemp("redis")), db, services.redis_url())
    yield dep
    dep.stop()
    services.drop_database(db)


def test_activities_complete_over_redis(redis_deployment: Deployment) -> None:
    client = redis_deployment.client()
    assert client.get_whoami(GetWhoamiBody()).userId == redis_deployment.root.user_id
    key = make_key()
    created = client.create_api_keys(CreateApiKeysBody(
        userId=redis_deployment.root.user_id, apiKeys=[key.api_key_params("redis", "3600")]))
    assert created.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    fetched = client.get_api_key(GetApiKeyBody(apiKeyId=created.apiKeyIds[0]))
    assert fetched.apiKey.credential.publicKey == key.public_key
