"""``GET /public/v1/openapi.json`` serves the document of what the deployment accepts."""

from __future__ import annotations

import requests

from infra.openapi.document import served_document
from tests.support.deployment import Deployment


def test_openapi_document_is_served_without_a_stamp(embedded: Deployment) -> None:
    response = requests.get(embedded.base_url + "/public/v1/openapi.json", timeout=30)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    doc = response.json()
    assert doc == served_document()
    assert "/public/v1/submit/create_wallet" in doc["paths"]
    assert "/public/v1/query/get_wallet" in doc["paths"]
    # Turnkey operations this deployment does not serve are not offered.
    assert "/public/v1/submit/create_tvc_app" not in doc["paths"]
    assert "/public/v1/submit/eth_send_transaction" in doc["paths"]  # served since issue 25
