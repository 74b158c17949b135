"""``get_boot_proof``: the walletd boot record of a per-boot key, shaped as ``v1BootProof``.

Not an AWS Nitro attestation: ``awsAttestationDocB64`` is empty and ``qosManifestVersion``
is ``walletd-boot-record-v1`` (``infra.audit.boots``, docs/AUDIT.md).
"""

from __future__ import annotations

from typing import Any

from infra.audit import boots, log_key
from infra.db.models.audit import AuditBoot
from infra.errors import NotFound
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str
    ephemeral_key: str


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    row = ctx.session.get(AuditBoot, params.ephemeral_key.lower())
    if row is None:
        raise NotFound(f"no boot record for ephemeral key {params.ephemeral_key}")
    return {"bootProof": boots.boot_proof(row, str(log_key.verifier(ctx.session)))}


SPEC = QuerySpec(path="get_boot_proof", params=Params, run=run)
