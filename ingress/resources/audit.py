"""Unauthenticated audit-log routes for witnesses and monitors (hashes and sizes only; leaf
contents need an organization's credentials: ``get_audit_inclusion_proof``).

* ``GET /public/v1/audit/checkpoint`` — the latest signed checkpoint, ``text/plain`` (a C2SP
  signed note);
* ``GET /public/v1/audit/consistency?first=N[&second=M]`` — ``{checkpoint, firstTreeSize,
  consistencyProof}``.
"""

from __future__ import annotations

import falcon

from infra.audit import checkpoints, proofs
from infra.bootstrap import Services


class AuditCheckpointResource:
    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.cache_control = ["no-store"]
        with self.services.read_session_factory() as session:
            stored = checkpoints.latest(session)
        resp.content_type = "text/plain; charset=utf-8"
        resp.text = stored.note


class AuditConsistencyResource:
    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.cache_control = ["no-store"]
        first = proofs.parse_size(req.get_param("first") or "", "first") or 0
        second = proofs.parse_size(req.get_param("second"), "second")
        with self.services.read_session_factory() as session:
            resp.media = proofs.consistency_between(session, first, second)
