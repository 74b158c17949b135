"""Resource limits over HTTP (PROTOCOL.md §10): 429, code 8, a message naming the limit, and
nothing of the refused activity stored. Every limit is unit-tested against the flush listener
in tests/unit/identity/test_quotas.py; these prove the whole path on both deployments.
"""

from __future__ import annotations

import json
import socket
from typing import Any
from urllib.parse import urlparse

import requests

from ingress.resources.api import MAX_BODY
from tests.support.deployment import Deployment, make_organization
from tests.support.raw_api import RawApi

GRPC_RESOURCE_EXHAUSTED = 8


def _assert_limit(response: Any, message: str) -> None:
    assert response.status_code == 429, response.text
    assert response.json() == {"code": GRPC_RESOURCE_EXHAUSTED, "message": message,
                               "details": response.json()["details"]}


def _invitation(i: int, sender: str) -> dict[str, Any]:
    return {"receiverUserName": f"invitee {i}", "receiverUserEmail": f"invitee{i}@example.com",
            "receiverUserTags": [], "accessType": "ACCESS_TYPE_WEB", "senderUserId": sender}


def test_the_101st_invitation_is_refused(deployment: Deployment) -> None:
    org = make_organization(deployment, "invitation limit")
    api = RawApi(deployment, org, org.organization_id)
    created = api.ok("create_invitations", "ACTIVITY_TYPE_CREATE_INVITATIONS",
                     {"invitations": [_invitation(i, org.user_id) for i in range(100)]})
    assert len(created["invitationIds"]) == 100
    refused = api.submit("create_invitations", "ACTIVITY_TYPE_CREATE_INVITATIONS",
                         {"invitations": [_invitation(100, org.user_id)]})
    _assert_limit(refused, "organization has exceeded maximum number of invitations "
                           "(limit invitations_per_organization: 100)")
    invitations = api.read("get_organization")["organizationData"]["invitations"]
    assert len(invitations) == 100
    assert "invitee100@example.com" not in {i["receiverEmail"] for i in invitations}


def _provider(i: int) -> dict[str, Any]:
    return {"providerName": f"idp {i}", "oidcClaims": {
        "iss": "https://accounts.example", "aud": "app-1", "sub": f"subject-{i}"}}


def test_the_11th_oauth_provider_of_a_user_is_refused(deployment: Deployment) -> None:
    org = make_organization(deployment, "oauth limit")
    api = RawApi(deployment, org, org.organization_id)
    created = api.ok("create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
                     {"userId": org.user_id, "oauthProviders": [_provider(i) for i in range(10)]})
    assert len(created["providerIds"]) == 10
    refused = api.submit("create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2",
                         {"userId": org.user_id, "oauthProviders": [_provider(10)]})
    _assert_limit(refused, "user has exceeded maximum number of OAuth providers "
                           "(limit oauth_providers_per_user: 10)")
    listed = api.read("get_oauth_providers", {"userId": org.user_id})["oauthProviders"]
    assert sorted(p["subject"] for p in listed) == sorted(f"subject-{i}" for i in range(10))


def test_a_body_over_the_limit_is_refused_in_the_wire_format(deployment: Deployment) -> None:
    body = b'{"organizationId":"x","pad":"' + b"a" * MAX_BODY + b'"}'
    refused = requests.post(deployment.base_url + "/public/v1/submit/create_wallet", data=body,
                            headers={"Content-Type": "application/json"}, timeout=60)
    assert refused.status_code == 400, refused.text
    assert refused.json()["message"] == f"request body exceeds {MAX_BODY} bytes"


def test_a_huge_declared_body_is_refused_at_once_in_the_wire_format(deployment: Deployment) -> None:
    """Nothing of a gigabyte is read or buffered: the headers alone get a 4xx with the wire
    error body (from the app in production; from ``walletd up``'s server, which refuses
    bodies over twice the limit unread)."""
    url = urlparse(deployment.base_url)
    with socket.create_connection((url.hostname, url.port), timeout=10) as conn:
        conn.sendall(b"POST /public/v1/submit/create_wallet HTTP/1.1\r\n"
                     b"Host: walletd\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1073741824\r\n\r\n{")
        reply = conn.makefile("rb")
        status = reply.readline().split()[1]
        headers = {}
        while (line := reply.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        error = json.loads(reply.read(int(headers["content-length"])))
    assert status in (b"400", b"413"), status
    assert headers["content-type"].startswith("application/json")
    assert error["code"] == 3 and "exceeds" in error["message"]
    assert error["details"][0]["turnkeyErrorCode"] == "REQUEST_INVALID"
