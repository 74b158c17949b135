"""``GET /public/v1/discovery/keys``: the service's public keys, unauthenticated.

Each section is ``section(session) -> {wire_key: value}`` and reads only public material
(never key rings).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sqlalchemy.orm import Session

from infra.audit.log_key import discovery_section as audit_log_section
from infra.sessions.service_keys import discovery_section as service_keys_section
from infra.wallets.sections import signer_section

#: The sections of the document, in order.
DISCOVERY_KEYS: Final[tuple[Callable[[Session], dict[str, Any]], ...]] = (
    signer_section,        # signerPublicKey
    service_keys_section,  # notarizerPublicKey, verificationTokenPublicKey, encryptionPublicKey
    audit_log_section,     # auditLogOrigin, auditLogVerifierKey (once a worker created the key)
)


def discovery_keys(session: Session) -> dict[str, Any]:
    """Every public key of the document, merged."""
    out: dict[str, Any] = {}
    for section in DISCOVERY_KEYS:
        out.update(section(session))
    return out
