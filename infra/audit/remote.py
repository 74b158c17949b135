"""``walletd audit verify --url``: verify a running deployment's log as one organization.

The published checkpoint (signature, consistency with the kept state, as the witness), then
every activity the organization's API key can list: all its leaves with their inclusion
proofs against that checkpoint, their ``prev`` chain complete, and the newest leaf against
the activity the API renders (status, type, fingerprint, result digest).
"""

from __future__ import annotations

import base64
import json
import urllib.request
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec

from infra.audit import merkle, note
from infra.audit.canonical import digest
from infra.audit.leaves import ACTIVITY, ROW_KINDS
from infra.audit.verify import Discrepancy, order_findings
from infra.audit.witness import Witness
from infra.authproxy.keys import stamp_with


class Client:
    """Stamped queries with an API key file (``organizationId``, ``apiPrivateKey``)."""

    def __init__(self, base_url: str, key_file: Path) -> None:
        key = json.loads(key_file.read_text())
        self.base_url = base_url.rstrip("/")
        self.organization_id = str(key["organizationId"])
        self._private = ec.derive_private_key(int(key["apiPrivateKey"], 16), ec.SECP256R1())

    def query(self, name: str, body: dict[str, Any]) -> Any:
        data = json.dumps({"organizationId": self.organization_id, **body}).encode()
        request = urllib.request.Request(
            f"{self.base_url}/public/v1/query/{name}", data=data, method="POST",
            headers={"Content-Type": "application/json",
                     "X-Stamp": stamp_with(self._private, data)})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def activities(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        after: str | None = None
        while True:
            page: dict[str, Any] = {"limit": "100"}
            if after:
                page["after"] = after
            batch = self.query("list_activities", {"paginationOptions": page})["activities"]
            out.extend(batch)
            if len(batch) < 100:
                return out
            after = batch[-1]["id"]


def _check_activity(activity: dict[str, Any], answer: dict[str, Any],
                    checkpoint: note.Checkpoint, organization_id: str) -> list[str]:
    found: list[str] = []
    activity_id = activity["id"]
    previous: int | None = None
    newest: dict[str, Any] | None = None
    before: tuple[int, dict[str, Any]] | None = None
    for leaf in answer["leaves"]:
        index = int(leaf["leafIndex"])
        data = leaf["leafData"].encode()
        try:
            merkle.verify_inclusion(index, checkpoint.size, merkle.leaf_hash(data),
                                    [base64.b64decode(p) for p in leaf["inclusionProof"]],
                                    checkpoint.root)
        except merkle.ProofError as err:
            found.append(f"activity {activity_id}: leaf {index} is not in the checkpoint: {err}")
            continue
        content = json.loads(data)
        if content.get("index") != index or content.get("activityId") != activity_id or \
                content.get("organizationId") != organization_id:
            found.append(f"activity {activity_id}: leaf {index} describes something else")
        if content.get("prev") != previous:
            found.append(f"activity {activity_id}: leaf {index} names {content.get('prev')} as "
                         f"the previous leaf, the log served {previous}: a leaf is missing")
        previous = index
        if content.get("kind") == ACTIVITY:
            found.extend(order_findings(index, content, before))
            before = (index, content)
        if content.get("kind") in ROW_KINDS:
            newest = content
    for pending in answer.get("pendingLeaves", []):
        content = json.loads(pending)
        if content.get("kind") in ROW_KINDS:
            newest = content
    if newest is None:
        return [*found, f"activity {activity_id} has no leaf"]
    rendered = {"status": activity.get("status"), "type": activity.get("type"),
                "fingerprint": activity.get("fingerprint"),
                "resultDigest": digest(activity.get("result") or None)}
    for name, value in rendered.items():
        if newest.get(name) != value:
            found.append(f"activity {activity_id}: its {name} differs from its newest leaf "
                         f"({newest.get(name)!r}, the API gives {value!r})")
    return found


def verify_remote(base_url: str, key_file: Path, state_path: Path, pinned: str | None) -> str:
    """Verify; returns a one-line summary or raises :class:`Discrepancy`."""
    checkpoint = Witness(base_url, state_path, pinned).check()
    client = Client(base_url, key_file)
    findings: list[str] = []
    activities = client.activities()
    for activity in activities:
        answer = client.query("get_audit_inclusion_proof", {
            "activityId": activity["id"], "treeSize": str(checkpoint.size)})
        findings.extend(_check_activity(activity, answer, checkpoint, client.organization_id))
    if findings:
        raise Discrepancy(findings)
    return (f"checkpoint of size {checkpoint.size} is consistent with the last one kept; "
            f"{len(activities)} activities of {client.organization_id} are in it")
