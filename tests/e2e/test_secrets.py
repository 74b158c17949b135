"""Secrets round-trip with the official clients, stay sealed at rest, and obey policies.

``tests/interop/secrets_interop.mjs`` drives ``init_import_secrets`` → ``import_secrets`` →
``list_secrets`` → ``export_secrets`` with ``@turnkey/http`` and seals/opens the values with
``@turnkey/crypto`` (both paths: ``walletd up`` and PostgreSQL + RabbitMQ).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import psycopg
import pytest
import requests

from infra.crypto import bundles, hpke
from tests.support.deployment import Deployment, database_url
from tests.support.interop import node_with, run_script
from tests.support.raw_api import RawApi

SUITE = "TRANSPORT_ENCRYPTION_SUITE_ENCLAVE_ENCRYPT_V1"


@pytest.fixture(scope="module")
def node() -> str:
    return node_with("@turnkey/crypto", "@turnkey/http", "@turnkey/api-key-stamper")


def _signer(dep: Deployment) -> str:
    return str(requests.get(dep.base_url + "/public/v1/discovery/keys", timeout=10)
               .json()["signerPublicKey"])


def _round_trip(node: str, dep: Deployment, secrets: list[dict[str, Any]]) -> dict[str, Any]:
    root = dep.root
    return dict(run_script(node, "secrets_interop.mjs", {
        "baseUrl": dep.base_url, "organizationId": root.organization_id,
        "publicKey": root.public_key, "privateKey": root.private_key,
        "signer": _signer(dep), "secrets": secrets}))


def _stored_rows(dep: Deployment) -> list[tuple[Any, ...]]:
    url = database_url(dep)
    query = "SELECT name, static_properties, wrapped_key, ciphertext FROM secrets"
    if url.startswith("sqlite"):
        with sqlite3.connect(url.split("///", 1)[1]) as conn:
            return conn.execute(query).fetchall()
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://")) as conn:
        return conn.execute(query).fetchall()


def test_secrets_round_trip_through_the_official_sdks(node: str, deployment: Deployment) -> None:
    values = ["sk_live_" + "x" * 40, "p\u00e4ssw\u00f6rd with spaces", "-----BEGIN KEY-----\nabc"]
    secrets = [{"name": f"api-token-{i}", "value": v,
                "staticProperties": [{"key": "env", "value": "prod"}]}
               for i, v in enumerate(values)]
    out = _round_trip(node, deployment, secrets)
    assert out["values"] == values
    listed = {s["secretId"]: s for s in out["listed"]}
    assert set(out["secretIds"]) <= set(listed)
    first = listed[out["secretIds"][0]]
    assert first["name"] == "api-token-0"
    assert first["staticProperties"] == [{"key": "env", "value": "prod"}]
    assert int(first["createdAtUnixMs"]) > 0
    assert "secretPayload" not in json.dumps(out["listed"])
    # At rest: sealed (no value, not even its base64 or hex, in any stored column).
    dump = json.dumps([[str(c) for c in row] for row in _stored_rows(deployment)])
    for value in values:
        encodings = {value, value.encode().hex(), json.dumps(value)[1:-1]}
        assert not any(e in dump for e in encodings)


def test_a_target_takes_one_secret_and_names_are_unique(node: str,
                                                        deployment: Deployment) -> None:
    api = RawApi(deployment, deployment.root, deployment.root.organization_id)
    init = api.ok("init_import_secrets", "ACTIVITY_TYPE_INIT_IMPORT_SECRETS",
                  {"encryptionSuite": SUITE, "numSecrets": 1})
    [message] = init["enclaveTargetMessages"]
    data = bundles.verify_signed_bundle(message, _signer(deployment))
    assert data["organizationId"] == deployment.root.organization_id
    target = data["targetPublic"]
    payload = bundles.encrypt_to_bundle(b"value-one", target)
    params = {"secrets": [{"name": "unique-name", "secretPayload": payload,
                           "targetPublicKey": target, "encryptionSuite": SUITE}]}
    api.ok("import_secrets", "ACTIVITY_TYPE_IMPORT_SECRETS", params)
    params["secrets"][0]["name"] = "another-name"
    again = api.submit("import_secrets", "ACTIVITY_TYPE_IMPORT_SECRETS", params)
    assert again.status_code == 400, again.text
    assert "init_import_secrets" in again.json()["message"]
    # A fresh target, the same name: refused as a duplicate.
    init = api.ok("init_import_secrets", "ACTIVITY_TYPE_INIT_IMPORT_SECRETS",
                  {"encryptionSuite": SUITE, "numSecrets": 1})
    target = bundles.verify_signed_bundle(
        init["enclaveTargetMessages"][0], _signer(deployment)
    )["targetPublic"]
    params["secrets"][0].update(secretPayload=bundles.encrypt_to_bundle(b"v2", target),
                                targetPublicKey=target, name="unique-name")
    dup = api.submit("import_secrets", "ACTIVITY_TYPE_IMPORT_SECRETS", params)
    assert dup.status_code == 409, dup.text


@pytest.mark.parametrize("parameters, field", [
    ({"encryptionSuite": "TRANSPORT_ENCRYPTION_SUITE_NONE", "numSecrets": 1}, "encryptionSuite"),
    ({"encryptionSuite": SUITE, "numSecrets": 0}, "numSecrets"),
    ({"encryptionSuite": SUITE, "numSecrets": 101}, "numSecrets"),
])
def test_init_import_secrets_refuses_bad_input(parameters: dict[str, Any], field: str,
                                               deployment: Deployment) -> None:
    api = RawApi(deployment, deployment.root, deployment.root.organization_id)
    response = api.submit("init_import_secrets", "ACTIVITY_TYPE_INIT_IMPORT_SECRETS", parameters)
    assert response.status_code == 400, response.text
    body = response.json()
    assert set(body) >= {"code", "message", "details"}
    assert field in json.dumps(body["details"])


def test_export_is_gated_by_policy_on_the_secret_name(deployment: Deployment) -> None:
    """A non-root user exports only what a policy allows, by the secret's name and properties."""
    from tests.support.keys import make_key

    root = RawApi(deployment, deployment.root, deployment.root.organization_id)
    key = make_key()
    users = root.ok("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [{
        "userName": "exporter", "userTags": [], "authenticators": [], "oauthProviders": [],
        "apiKeys": [{"apiKeyName": "k", "publicKey": key.public_key,
                     "curveType": "API_KEY_CURVE_P256"}]}]})
    user_id = users["userIds"][0]
    signer = _signer(deployment)
    ids = {}
    for name in ("shareable", "crown-jewels"):
        init = root.ok("init_import_secrets", "ACTIVITY_TYPE_INIT_IMPORT_SECRETS",
                       {"encryptionSuite": SUITE, "numSecrets": 1})
        target = bundles.verify_signed_bundle(
            init["enclaveTargetMessages"][0], signer)["targetPublic"]
        done = root.ok("import_secrets", "ACTIVITY_TYPE_IMPORT_SECRETS", {"secrets": [{
            "name": name, "secretPayload": bundles.encrypt_to_bundle(name.encode(), target),
            "targetPublicKey": target, "encryptionSuite": SUITE,
            "staticProperties": [{"key": "env", "value": "ci"}]}]})
        ids[name] = done["secretIds"][0]
    root.ok("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "export shareable secrets", "effect": "EFFECT_ALLOW", "notes": "",
        "consensus": f"approvers.any(user, user.id == '{user_id}')",
        "condition": "activity.resource == 'SECRET' && activity.action == 'EXPORT' && "
                     "secrets.all(s, s.name == 'shareable' && s.properties.env == 'ci')"})
    user = RawApi(deployment, key, deployment.root.organization_id)
    embedded = hpke.generate_private_key()
    target_hex = hpke.uncompressed(embedded.public_key()).hex()

    def export(secret_id: str) -> requests.Response:
        return user.submit("export_secrets", "ACTIVITY_TYPE_EXPORT_SECRETS", {"secrets": [{
            "secretId": secret_id, "targetPublicKey": target_hex, "encryptionSuite": SUITE}]})

    allowed = export(ids["shareable"])
    assert allowed.status_code == 200, allowed.text
    payload = allowed.json()["activity"]["result"]["exportSecretsResult"]["secretPayloads"][0]
    assert bundles.open_export_bundle(
        payload, embedded, signer_public_key_hex=signer,
        organization_id=deployment.root.organization_id) == b"shareable"
    denied = export(ids["crown-jewels"])
    assert denied.status_code == 403, denied.text
