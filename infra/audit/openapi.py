"""The audit queries' OpenAPI (swagger 2.0) descriptions: walletd's own operations, served in
``/public/v1/openapi.json`` beside Turnkey's (``QuerySpec.document``)."""

from __future__ import annotations

from typing import Any

TAG = "Audit Log"
_ORG = {"type": "string", "description": "Unique identifier for a given Organization."}
_SIZE = {"type": "string", "format": "uint64", "description": "A tree size (decimal)."}
_B64_LIST = {"type": "array", "items": {"type": "string"},
             "description": "Hashes (standard base64), RFC 9162 order."}

CHECKPOINT = {
    "type": "object",
    "description": "A signed checkpoint: C2SP tlog-checkpoint text in a C2SP signed note "
                   "(Ed25519, key published as auditLogVerifierKey at /public/v1/discovery/keys).",
    "properties": {"treeSize": _SIZE,
                   "rootHash": {"type": "string", "description": "RFC 6962 root, base64."},
                   "note": {"type": "string", "description": "The signed note."}},
    "required": ["treeSize", "rootHash", "note"],
}
LEAF = {
    "type": "object",
    "properties": {
        "leafIndex": _SIZE,
        "leafData": {"type": "string",
                     "description": "The leaf: canonical JSON (RFC 8785 style) of digests and "
                                    "identifiers; its RFC 6962 leaf hash is leafHash."},
        "leafHash": {"type": "string"},
        "inclusionProof": _B64_LIST,
    },
    "required": ["leafIndex", "leafData", "leafHash", "inclusionProof"],
}


def operation(name: str, summary: str, description: str, request: dict[str, Any],
              response: dict[str, Any]) -> dict[str, Any]:
    """``{"path": <path item>, "definitions": {...}}`` of one audit query."""
    camel = "".join(p.capitalize() for p in name.split("_"))
    req, resp = f"walletdAudit{camel}Request", f"walletdAudit{camel}Response"
    return {
        "path": {"post": {
            "summary": summary, "description": description,
            "operationId": f"WalletdAudit_{camel}", "tags": [TAG],
            "parameters": [{"name": "body", "in": "body", "required": True,
                            "schema": {"$ref": f"#/definitions/{req}"}}],
            "responses": {
                "200": {"description": "A successful response.",
                        "schema": {"$ref": f"#/definitions/{resp}"}},
                "default": {"description": "An unexpected error response.",
                            "schema": {"$ref": "#/definitions/rpcStatus"}}},
        }},
        "definitions": {
            req: {"type": "object", "properties": {"organizationId": _ORG, **request},
                  "required": ["organizationId"]},
            resp: {"type": "object", "properties": response, "required": sorted(response)},
            "walletdAuditCheckpoint": CHECKPOINT,
            "walletdAuditLeaf": LEAF,
        },
    }


CHECKPOINT_REF = {"$ref": "#/definitions/walletdAuditCheckpoint"}
LEAF_LIST = {"type": "array", "items": {"$ref": "#/definitions/walletdAuditLeaf"}}
SIZE = _SIZE
HASHES = _B64_LIST
