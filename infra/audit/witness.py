"""``walletd audit witness URL``: a minimal witness of a deployment's audit log.

It keeps the last checkpoint it accepted (and the log key it pinned on first contact) in a
state file, fetches the deployment's latest checkpoint (``GET /public/v1/audit/checkpoint``),
checks its signature, and accepts it only as a consistent extension of the one it kept
(``GET /public/v1/audit/consistency``): a smaller tree (a rollback), a different root at the
same size (a fork) or a failed consistency proof (rewritten history) is refused and reported,
and the kept checkpoint stays. A log that shows such a witness one history cannot show
another to clients who compare with it (C2SP ``tlog-witness`` describes the full protocol,
with cosignatures).
"""

from __future__ import annotations

import base64
import json
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.audit import note
from infra.audit.verify import Discrepancy, State, check_extension, pin


def _get(url: str, timeout: float = 10.0) -> bytes:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        data: bytes = response.read()
        return data


@dataclass
class Witness:
    """One log's witness state and how it reaches the log."""

    base_url: str
    state_path: Path
    pinned: str | None = None
    fetch: Callable[[str], bytes] = _get

    def _json(self, path: str) -> Any:
        return json.loads(self.fetch(self.base_url.rstrip("/") + path))

    def published_verifier(self) -> note.Verifier:
        keys = self._json("/public/v1/discovery/keys")
        if "auditLogVerifierKey" not in keys:
            raise Discrepancy(["the deployment publishes no auditLogVerifierKey"])
        return note.Verifier.parse(keys["auditLogVerifierKey"])

    def check(self) -> note.Checkpoint:
        """Fetch, check and (if consistent) keep the latest checkpoint; raises
        :class:`Discrepancy` when refused (the state is then left as it was)."""
        state = State.load(self.state_path)
        verifier = pin(state, self.published_verifier(), self.pinned)
        signed = self.fetch(self.base_url.rstrip("/") + "/public/v1/audit/checkpoint").decode()
        try:
            checkpoint = note.open_checkpoint(signed, verifier)
        except note.NoteError as err:
            raise Discrepancy([f"the published checkpoint does not verify: {err}"]) from err

        def proof(first: int) -> list[bytes]:
            answer = self._json(f"/public/v1/audit/consistency?first={first}"
                                f"&second={checkpoint.size}")
            return [base64.b64decode(p) for p in answer["consistencyProof"]]

        check_extension(state, checkpoint, proof)
        state.size, state.root, state.note = (checkpoint.size,
                                              base64.b64encode(checkpoint.root).decode(), signed)
        state.save(self.state_path)
        return checkpoint
