"""Per-boot keys, walletd boot records and Turnkey-shaped app proofs.

Every worker-type process generates, at start, a *boot key*: two P-256 key pairs that never
leave its memory (Turnkey's ephemeral key is an encryption key and a signing key; its
``publicKey`` is their uncompressed points concatenated, 130 bytes). The process then writes a
*boot record* — walletd's version, a digest of its code, a digest of its configuration (secrets
left out), the boot key, the start time — signed by the log key, stored in ``audit_boots`` and
appended to the log as a ``boot`` leaf.

An activity submitted with ``generateAppProofs: true`` gets, when it completes, an app proof
(``v1AppProof``): scheme ``SIGNATURE_SCHEME_EPHEMERAL_KEY_P256``, the boot key of the process
that executed it, a JSON payload of type ``APP_PROOF_TYPE_ADDRESS_DERIVATION`` (results that
derive addresses: wallets, accounts, private keys) or ``APP_PROOF_TYPE_POLICY_OUTCOME``
(everything else, policy-gated), and an ECDSA P-256 signature (r||s hex) over SHA-256 of the
payload's bytes — what ``@turnkey/crypto``'s ``verifyAppProofSignature`` checks. The payload
commits to the activity's leaf by the digest of the leaf's staged entry (the leaf without
``index``/``prev``, see ``get_audit_inclusion_proof``).

What this is not: an AWS Nitro attestation. ``get_boot_proof`` answers with the boot record
in fields no client can take for one (``awsAttestationDocB64`` empty, ``qosManifestVersion``
``walletd-boot-record-v1``): ``@turnkey/crypto``'s ``verify``/``verifyPair`` and
``@turnkey/core``'s ``verifyWalletOnSignup`` fail on it by design (docs/AUDIT.md).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from infra.audit import leaves
from infra.audit.canonical import canonical, digest
from infra.audit.log_key import LogKey
from infra.clock import now
from infra.db.activity_rows import ActivityRow
from infra.db.changes import Change, Effects, Insert
from infra.db.models.activities import Activity
from infra.db.models.audit import AuditAppProof, AuditBoot, table
from infra.db.unit_of_work import UnitOfWork

SCHEME: Final = "SIGNATURE_SCHEME_EPHEMERAL_KEY_P256"
ADDRESS_DERIVATION: Final = "APP_PROOF_TYPE_ADDRESS_DERIVATION"
POLICY_OUTCOME: Final = "APP_PROOF_TYPE_POLICY_OUTCOME"
MANIFEST_VERSION: Final = "walletd-boot-record-v1"
APP_NAME: Final = "walletd"
COMPLETED: Final = "ACTIVITY_STATUS_COMPLETED"
_CODE_PACKAGES: Final = ("infra", "ingress", "workers", "consensus", "notifier", "walletd",
                         "authproxy")
_SECRET_WORDS: Final = ("url", "secret", "password", "token", "key")
_N: Final = int("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551", 16)


def _uncompressed(key: ec.EllipticCurvePublicKey) -> bytes:
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    return key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)


@dataclass(frozen=True)
class BootKey:
    """This process's ephemeral keys (memory only)."""

    encryption: ec.EllipticCurvePrivateKey
    signing: ec.EllipticCurvePrivateKey
    started_at_ms: int

    @classmethod
    def generate(cls) -> BootKey:
        return cls(ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1()),
                   time.time_ns() // 1_000_000)

    @property
    def public_hex(self) -> str:
        """Encryption point || signing point, uncompressed (130 bytes), hex."""
        return (_uncompressed(self.encryption.public_key())
                + _uncompressed(self.signing.public_key())).hex()

    def sign(self, payload: bytes) -> str:
        """ECDSA P-256 over SHA-256(payload), r||s hex with a low s."""
        r, s = decode_dss_signature(self.signing.sign(payload, ec.ECDSA(hashes.SHA256())))
        s = min(s, _N - s)
        return (r.to_bytes(32, "big") + s.to_bytes(32, "big")).hex()


def code_digest() -> str:
    """SHA-256 over walletd's Python sources (path and bytes, in path order)."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for package in _CODE_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def config_digest(settings: Any) -> str:
    """A digest of the settings with URLs, secrets and key locations left out."""
    values = ({f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
              if dataclasses.is_dataclass(settings) else {})
    shown = {k: (str(v) if not any(w in k.lower() for w in _SECRET_WORDS) else "<withheld>")
             for k, v in sorted(values.items())}
    return digest(shown) or ""


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("walletd")
    except Exception:
        return "unknown"


def record_boot(session: Session, boot: BootKey, key: LogKey, settings: Any, role: str) -> dict[str, Any]:
    """Store this process's signed boot record and stage its leaf (caller commits)."""
    record = {
        "manifestVersion": MANIFEST_VERSION, "app": APP_NAME, "role": role,
        "version": _version(), "codeDigest": code_digest(), "configDigest": config_digest(settings),
        "ephemeralPublicKey": boot.public_hex, "startedAtMs": str(boot.started_at_ms),
        "logOrigin": key.origin,
        "notAnEnclave": "walletd runs as an ordinary process: no hardware attestation",
    }
    data = canonical(record)
    signature = base64.b64encode(key.sign(data)).decode()
    session.execute(insert(table(AuditBoot)).values(public_key=boot.public_hex,
                                                    record=data.decode(), signature=signature,
                                                    created_at=now()))
    leaves.stage(session, {"kind": leaves.BOOT, "ephemeralPublicKey": boot.public_hex,
                           "bootRecordDigest": digest(record), "time": leaves.timestamp()})
    return record


def boot_proof(row: AuditBoot, verifier_key: str) -> dict[str, Any]:
    """``v1BootProof`` carrying a walletd boot record (no attestation document)."""
    envelope = {"signatureScheme": "ED25519_LOG_KEY", "signature": row.signature,
                "verifierKey": verifier_key}
    created = row.created_at
    return {
        "ephemeralPublicKeyHex": row.public_key,
        "awsAttestationDocB64": "",
        "qosManifestB64": base64.b64encode(row.record.encode()).decode(),
        "qosManifestEnvelopeB64": base64.b64encode(json.dumps(envelope).encode()).decode(),
        "deploymentLabel": "walletd-self-hosted",
        "enclaveApp": APP_NAME,
        "owner": "walletd (self-hosted, no enclave)",
        "createdAt": {"seconds": str(int(created.timestamp())),
                      "nanos": str(created.microsecond * 1000)},
        "qosManifestVersion": MANIFEST_VERSION,
    }


def wants_proofs(activity: Activity | ActivityRow) -> bool:
    """Whether the request asked for app proofs (``generateAppProofs: true``)."""
    if "generateAppProofs" not in (activity.body or ""):
        return False
    try:
        return json.loads(activity.body).get("generateAppProofs") is True
    except ValueError:
        return False


def _addresses(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "addresses" and isinstance(v, list):
                found.extend(str(a) if not isinstance(a, dict) else str(a.get("address", ""))
                             for a in v)
            else:
                found.extend(_addresses(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(_addresses(v))
    return found


def app_proof(boot: BootKey, activity: ActivityRow, entry: str) -> dict[str, Any]:
    """The ``v1AppProof`` of a completed activity whose leaf entry is ``entry``."""
    addresses = _addresses(activity.result)
    leaf = json.loads(entry)
    payload: dict[str, Any] = {
        "type": ADDRESS_DERIVATION if addresses else POLICY_OUTCOME,
        "timestampMs": str(time.time_ns() // 1_000_000),
        "organizationId": activity.organization_id,
        "activityId": activity.id,
        "activityType": activity.type,
        "fingerprint": activity.fingerprint,
        "walletdLeafEntryDigest": digest(leaf),
        "resultDigest": leaf.get("resultDigest"),
    }
    if addresses:
        payload["addresses"] = addresses
    else:
        payload["policyOutcome"] = leaf.get("policyOutcome")
        payload["decisionDigest"] = leaf.get("decisionDigest")
        payload["approvers"] = leaf.get("approvers")
    text = json.dumps(payload, separators=(",", ":"))
    return {"scheme": SCHEME, "publicKey": boot.public_hex, "proofPayload": text,
            "signature": boot.sign(text.encode())}


def proof_row(activity: ActivityRow, proof: dict[str, Any]) -> Insert:
    """The ``audit_app_proofs`` row of ``proof``, written by the activity store with the change."""
    return Insert(table(AuditAppProof), {
        "organization_id": activity.organization_id, "activity_id": activity.id,
        "proof": json.dumps(proof), "created_at": now()})


def proofs_of(session: Session, activity_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for activity_id, proof in session.execute(select(AuditAppProof.activity_id, AuditAppProof.proof)
                                              .where(AuditAppProof.activity_id.in_(list(activity_ids)))
                                              .order_by(AuditAppProof.id)):
        out.setdefault(activity_id, []).append(json.loads(proof))
    return out


class AppProofs:
    """The app-proof listener of one worker-type process (wired by ``infra.bootstrap`` after
    the leaf's listener): its boot key signs, once the process's boot record is stored."""

    def __init__(self, boot: BootKey) -> None:
        self.boot = boot
        self.recorded = False

    def record(self, session: Session, key: LogKey, settings: Any, role: str) -> None:
        """Store the signed boot record (the caller commits); proofs are made from then on."""
        record_boot(session, self.boot, key, settings, role)

    def on_activity_change(self, uow: UnitOfWork, change: Change) -> Effects | None:
        """The app proof of a completed activity that asked for one, committing to the leaf
        the audit listener returned for the change (same transaction)."""
        activity = change.after
        if not self.recorded or change.previous is None or activity.status != COMPLETED:
            return None
        if not wants_proofs(activity):
            return None
        entry = next((leaf.entry for leaf in reversed(change.leaves)
                      if leaf.activity_id == activity.id), None)
        if entry is None:
            return None
        return Effects(inserts=(proof_row(activity, app_proof(self.boot, activity, entry)),))
