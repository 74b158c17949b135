"""Schema fuzzing: schemathesis drives the served operations from Turnkey's own swagger.

The schema is the deployment's OpenAPI document (``infra.openapi.document``: Turnkey's
swagger cut to the served operations and accepted activity types). Every generated request,
positive and negative, is sent stamped over its exact bytes by the organization's root API
key, with the real ``organizationId`` and a fresh ``timestampMs`` (a ``before_call`` hook
fills them in before the body is serialised), so requests get past authentication and
reach validation, ``check`` and execution. String ids the swagger names (``userId``,
``walletId``, ...) are half the time replaced by ids that exist, so look-ups succeed too.

Checks: ``not_a_server_error`` (no 5xx), ``response_schema_conformance`` (every answer,
errors included, matches the swagger) and ``negative_data_rejection`` (a request the schema
forbids is a 4xx). Refusals the schema cannot express are listed in docs/CONFORMANCE.md.

Bounded in ``make test`` (``WALLETD_FUZZ_EXAMPLES`` examples per operation and mode, default
5, in an organization of its own on the session's embedded deployment); ``make fuzz`` runs
it long.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
import requests
import schemathesis
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core import NotSet
from schemathesis.specs.openapi.checks import negative_data_rejection, response_schema_conformance

from infra.openapi.document import served_document
from tests.support import keys
from tests.support.deployment import Deployment, make_organization
from tests.support.raw_api import RawApi

EXAMPLES = int(os.environ.get("WALLETD_FUZZ_EXAMPLES", "5"))
CHECKS = [not_a_server_error, response_schema_conformance, negative_data_rejection]

schema = schemathesis.openapi.from_dict(served_document())
schema.config.generation.update(
    modes=[schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE],
    max_examples=EXAMPLES, no_shrink=True)


@dataclass
class Target:
    """Where the fuzzer's requests go and what they are filled with."""

    dep: Deployment
    stamper: keys.TestKey
    ids: dict[str, str] = field(default_factory=dict)

    def fill(self, body: Any) -> None:
        """Real organization, fresh timestamp, and (for half the bodies) real ids, in place.

        Only string values are replaced, by strings: a body that violates the schema still
        does, one that satisfies it still does.
        """
        if not isinstance(body, dict):
            return
        if isinstance(body.get("organizationId"), str):
            body["organizationId"] = self.dep.root.organization_id
        if isinstance(body.get("timestampMs"), str):
            body["timestampMs"] = str(time.time_ns() // 1_000_000)
        digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).digest()
        if digest[0] % 2:
            self._real_ids(body)

    def _real_ids(self, node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                real = self.ids.get(key) or self.ids.get(key[:-1] if key.endswith("s") else "")
                if real and isinstance(value, str):
                    node[key] = real
                elif real and isinstance(value, list):
                    node[key] = [real if isinstance(v, str) else v for v in value]
                else:
                    self._real_ids(value)
        elif isinstance(node, list):
            for value in node:
                self._real_ids(value)


_TARGET: Target | None = None
#: Answers by (operation, status): the run must get past authentication, not only 401s.
TALLY: Counter[tuple[str, int]] = Counter()


@schemathesis.hook
def before_call(context: schemathesis.HookContext, case: schemathesis.Case,
                kwargs: dict[str, Any]) -> None:
    """Fill and stamp the body; send exactly the bytes that were stamped."""
    if _TARGET is None or isinstance(case.body, NotSet):
        return  # no body (e.g. an unexpected method): nothing to stamp
    body = case.body
    if isinstance(body, bytes):
        raw = body  # raw bytes (not JSON): sent and stamped as they are
    else:
        _TARGET.fill(body)
        raw = json.dumps(body, default=str).encode()
    case.headers = {**(case.headers or {}), "X-Stamp": _TARGET.stamper.stamp(raw),
                    "Content-Type": "application/json"}
    kwargs["data"] = raw


def _seed(dep: Deployment) -> dict[str, str]:
    """Resources whose ids the fuzzer may name."""
    api = RawApi(dep, dep.root, dep.root.organization_id)
    wallet = api.ok("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
        "walletName": "fuzz wallet", "accounts": [{
            "curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
            "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}]})
    key = api.ok("create_private_keys", "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", {"privateKeys": [{
        "privateKeyName": "fuzz key", "curve": "CURVE_SECP256K1", "privateKeyTags": [],
        "addressFormats": ["ADDRESS_FORMAT_ETHEREUM"]}]})["privateKeys"][0]
    policy = api.ok("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "fuzz policy", "effect": "EFFECT_ALLOW", "notes": "",
        "condition": "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'"})
    listed = api.read("list_activities")["activities"]
    return {
        "userId": dep.root.user_id,
        "walletId": wallet["walletId"],
        "address": wallet["addresses"][0],
        "signWith": key["addresses"][0]["address"],
        "privateKeyId": key["privateKeyId"],
        "policyId": policy["policyId"],
        "activityId": listed[0]["id"],
    }


@pytest.fixture(scope="module")
def target(embedded: Deployment) -> Iterator[Target]:
    """An organization of its own on the session's embedded deployment (its own quotas)."""
    global _TARGET
    root = make_organization(embedded, "Fuzz Org")
    dep = replace(embedded, root=root)
    private = ec.derive_private_key(int(root.private_key, 16), ec.SECP256R1())
    stamper = keys.TestKey("API_KEY_CURVE_P256", root.public_key, root.private_key, private)
    _TARGET = Target(dep, stamper, _seed(dep))
    try:
        yield _TARGET
    finally:
        _TARGET = None


@schema.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck), max_examples=EXAMPLES)
def test_served_operation(case: schemathesis.Case, target: Target) -> None:
    with requests.Session() as session:
        response = case.call(base_url=target.dep.base_url, session=session, timeout=30)
    TALLY[(case.operation.path, response.status_code)] += 1
    case.validate_response(response, checks=CHECKS)


def test_the_fuzzer_got_past_authentication(target: Target) -> None:
    """Runs after the operations: most answers were not 401s, and many operations answered
    200 (so the stamping hook works and generated requests reach the handlers)."""
    if not TALLY:
        pytest.skip("no operation was fuzzed in this run (deselected)")
    total = sum(TALLY.values())
    unauthenticated = sum(n for (_, status), n in TALLY.items() if status == 401)
    succeeded = {path for (path, status) in TALLY if status == 200}
    print(f"\nfuzz: {total} requests over {len({p for p, _ in TALLY})} operations; "
          f"statuses {dict(Counter(s for (_, s) in TALLY.elements()))}")
    assert unauthenticated < total / 10
    assert len(succeeded) >= len({p for p, _ in TALLY}) / 3
