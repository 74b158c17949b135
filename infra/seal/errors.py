"""Seal errors (part of the one hierarchy: each derives from a :mod:`infra.errors` class)."""

from __future__ import annotations

from infra.errors import InvalidRequest, Sealed, Unavailable

__all__ = ["BadShare", "SealMismatch", "SealUnavailable", "Sealed"]


class SealUnavailable(Unavailable):
    """The seal's backend (transit, KMS, HSM) cannot unwrap the root key right now."""

    code = "seal_unavailable"


class BadShare(InvalidRequest):
    """A share that is malformed, corrupted, or not of this deployment's set."""

    code = "bad_share"


class SealMismatch(InvalidRequest):
    """The configured seal does not match the sealed keyring, or init/migration misuse."""

    code = "seal_mismatch"
