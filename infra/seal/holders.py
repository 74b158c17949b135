"""What the seal hands to the concepts that need keys: custody over the master keyring,
the webhook signing ring, rotation of that ring inside the sealed keyring.

These live here, above wallets and webhooks, so neither of those imports the seal.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from infra.crypto.keyring import MasterKeyring
from infra.seal.sealed_file import Contents
from infra.seal.state import SealState
from infra.wallets.custody import Custody
from infra.webhooks.signing import (
    WebhookKeyRing,
    WebhookSigningKey,
    keyring_from_json,
    keyring_to_json,
)


def custody_of_seal(state: SealState) -> Custody:
    """Custody whose master keyring is the seal's (``Sealed`` while sealed)."""

    def keys() -> MasterKeyring:
        return state.contents().master

    return Custody(keys, on_change=state.force_reload)


class SealedKeyRing:
    """The webhook ring kept in the sealed keyring.

    ``ring()`` raises ``Sealed`` while the process is sealed; it follows rotations made by
    other processes at once (the seal re-reads the keyring when the file changed).
    """

    def __init__(self, state: SealState) -> None:
        self.state = state
        self._source: dict[str, Any] | None = None
        self._ring: WebhookKeyRing | None = None

    def ring(self) -> WebhookKeyRing:
        document = self.state.contents(fresh=True).webhooks
        if document is not self._source or self._ring is None:
            self._ring, self._source = keyring_from_json(document), document
        return self._ring


def rotate_webhook_keys(state: SealState, *, now_ms: int, overlap_ms: int) -> WebhookKeyRing:
    """Add a fresh key to the sealed webhook ring (see ``WebhookKeyRing.rotate``)."""
    rotated: list[WebhookKeyRing] = []

    def change(contents: Contents) -> Contents:
        ring = keyring_from_json(contents.webhooks).rotate(
            WebhookSigningKey.generate(), now_ms=now_ms, overlap_ms=overlap_ms)
        rotated.append(ring)
        return replace(contents, webhooks=keyring_to_json(ring))

    state.update(change)
    return rotated[-1]
