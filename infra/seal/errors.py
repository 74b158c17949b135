"""Seal errors (part of the one hierarchy: each derives from a :mod:`infra.errors` class)."""

from __future__ import annotations

from infra.errors import InvalidRequest, Unavailable


class Sealed(Unavailable):
    """The process holds no root key: nothing that needs a key can run (503, retried)."""

    code = "sealed"

    def __init__(self, message: str = "the service is sealed", **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]


class SealUnavailable(Unavailable):
    """The seal's backend (transit, KMS, HSM) cannot unwrap the root key right now."""

    code = "seal_unavailable"


class BadShare(InvalidRequest):
    """A share that is malformed, corrupted, or not of this deployment's set."""

    code = "bad_share"


class SealMismatch(InvalidRequest):
    """The configured seal does not match the sealed keyring, or init/migration misuse."""

    code = "seal_mismatch"
