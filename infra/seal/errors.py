"""Seal errors (part of the one hierarchy: each derives from a :mod:`infra.errors` class)."""

from __future__ import annotations

from infra.errors import FailedPrecondition, InvalidRequest, PermissionDenied, Sealed, Unavailable

__all__ = ["BadShare", "ForeignListener", "SealMismatch", "SealUnavailable", "Sealed",
           "StaticSealRefused", "UnsafeSocketDirectory"]


class SealUnavailable(Unavailable):
    """The seal's backend (transit, KMS, HSM) cannot unwrap the root key right now."""

    code = "seal_unavailable"


class BadShare(InvalidRequest):
    """A share that is malformed, corrupted, or not of this deployment's set."""

    code = "bad_share"


class SealMismatch(InvalidRequest):
    """The configured seal does not match the sealed keyring, or init/migration misuse."""

    code = "seal_mismatch"


class StaticSealRefused(FailedPrecondition):
    """A production process found the static seal without ``WALLETD_SEAL_ALLOW_STATIC``."""

    code = "static_seal_refused"


class UnsafeSocketDirectory(FailedPrecondition):
    """The admin socket directory belongs to another user or others can write into it."""

    code = "unsafe_socket_directory"


class ForeignListener(PermissionDenied):
    """An admin socket whose listening process runs as another user (``SO_PEERCRED``)."""

    code = "foreign_listener"
