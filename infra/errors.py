"""The one error hierarchy of walletd.

Every error a caller can see derives from :class:`WalletError`. Each class names the
condition (no ``Error`` suffix), carries a stable ``code`` and the gRPC status code the
wire protocol uses. ``ingress.errors`` translates them to HTTP in one place; workers record
them as an activity ``failure``. Anything that is not a ``WalletError`` is a bug and
surfaces as a generic 500 (ingress) or an INTERNAL failure (workers), never with details.
"""

from __future__ import annotations

from typing import Any, ClassVar

# gRPC status codes used on the wire (PROTOCOL.md §3.7).
GRPC_INVALID_ARGUMENT = 3
GRPC_NOT_FOUND = 5
GRPC_ALREADY_EXISTS = 6
GRPC_PERMISSION_DENIED = 7
GRPC_RESOURCE_EXHAUSTED = 8
GRPC_FAILED_PRECONDITION = 9
GRPC_INTERNAL = 13
GRPC_UNAVAILABLE = 14
GRPC_UNAUTHENTICATED = 16


class WalletError(Exception):
    """Root of every error walletd reports to a caller."""

    code: ClassVar[str] = "internal"
    grpc_code: ClassVar[int] = GRPC_INTERNAL
    turnkey_code: ClassVar[str | None] = None

    def __init__(self, message: str, *, details: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = list(details or [])
        self.details_final = False  # set when rebuilt from a stored body: send it unchanged

    def to_wire(self) -> dict[str, Any]:
        """The gRPC-gateway error body ``{code, message, details}``."""
        details = list(self.details)
        if self.details_final:
            return {"code": self.grpc_code, "message": self.message, "details": details}
        if self.turnkey_code and not any("turnkeyErrorCode" in d for d in details):
            details.append(
                {
                    "@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                    "turnkeyErrorCode": self.turnkey_code,
                }
            )
        return {"code": self.grpc_code, "message": self.message, "details": details}


class InvalidRequest(WalletError):
    """The request is malformed or its parameters are invalid (400)."""

    code = "invalid_request"
    grpc_code = GRPC_INVALID_ARGUMENT
    turnkey_code = "REQUEST_INVALID"

    def __init__(self, message: str, *, field: str | None = None, **kw: Any) -> None:
        details = kw.pop("details", None) or []
        if field:
            details.append(
                {
                    "@type": "type.googleapis.com/google.rpc.BadRequest",
                    "fieldViolations": [{"field": field, "description": message}],
                }
            )
        super().__init__(message, details=details)


class Unauthenticated(WalletError):
    """No valid stamp, unknown key, bad signature, expired key (401)."""

    code = "unauthenticated"
    grpc_code = GRPC_UNAUTHENTICATED
    turnkey_code = "UNAUTHENTICATED"


class InvalidSignature(Unauthenticated):
    """A signature did not verify."""

    code = "invalid_signature"
    turnkey_code = "SIGNATURE_INVALID"


class PermissionDenied(WalletError):
    """Authenticated, but not allowed (403)."""

    code = "permission_denied"
    grpc_code = GRPC_PERMISSION_DENIED
    turnkey_code: ClassVar[str | None] = "FORBIDDEN"


class PolicyDenied(PermissionDenied):
    """The policy engine denied the activity (403, gRPC 7).

    No details: clients show "Turnkey error 7: policy engine denied request explicitly
    (Details: [])" (PROTOCOL.md §3.4).
    """

    code = "policy_denied"
    turnkey_code = None


class NotFound(WalletError):
    """A named resource does not exist (404)."""

    code = "not_found"
    grpc_code = GRPC_NOT_FOUND


class AlreadyExists(WalletError):
    """A resource with that identity already exists (409)."""

    code = "already_exists"
    grpc_code = GRPC_ALREADY_EXISTS


class FailedPrecondition(WalletError):
    """The request is valid but the current state does not allow it (400)."""

    code = "failed_precondition"
    grpc_code = GRPC_FAILED_PRECONDITION


class ResourceExhausted(WalletError):
    """A limit was reached (429)."""

    code = "resource_exhausted"
    grpc_code = GRPC_RESOURCE_EXHAUSTED
    turnkey_code = "RATE_LIMIT_EXCEEDED"


class Unavailable(WalletError):
    """A dependency (database, broker) cannot be reached (503)."""

    code = "unavailable"
    grpc_code = GRPC_UNAVAILABLE


class Sealed(Unavailable):
    """The process holds no root key (the seal is closed): nothing needing a key can run.

    Workers retry the message (the activity stays PENDING); see docs/CUSTODY.md.
    """

    code = "sealed"

    def __init__(self, message: str = "the service is sealed", **kw: Any) -> None:
        super().__init__(message, **kw)


class InvalidCiphertext(WalletError):
    """Decryption failed; the reason is deliberately not revealed (400)."""

    code = "invalid_ciphertext"
    grpc_code = GRPC_INVALID_ARGUMENT
    turnkey_code = "REQUEST_INVALID"


class KeyVersionRetired(WalletError):
    """Data is wrapped under a master-key version that has been retired (500)."""

    code = "key_version_retired"
    grpc_code = GRPC_INTERNAL


class Internal(WalletError):
    """An unexpected failure; its message never carries details (500)."""

    code = "internal"
    grpc_code = GRPC_INTERNAL
    turnkey_code = "INTERNAL"


_BY_GRPC: dict[int, type[WalletError]] = {
    GRPC_INVALID_ARGUMENT: InvalidRequest,
    GRPC_NOT_FOUND: NotFound,
    GRPC_ALREADY_EXISTS: AlreadyExists,
    GRPC_PERMISSION_DENIED: PermissionDenied,
    GRPC_RESOURCE_EXHAUSTED: ResourceExhausted,
    GRPC_FAILED_PRECONDITION: FailedPrecondition,
    GRPC_UNAVAILABLE: Unavailable,
    GRPC_UNAUTHENTICATED: Unauthenticated,
}


def from_failure(failure: dict[str, Any]) -> WalletError:
    """Rebuild an error from a stored activity ``failure`` body."""
    cls = _BY_GRPC.get(int(failure.get("code", GRPC_INTERNAL)), Internal)
    err = cls.__new__(cls)
    WalletError.__init__(err, str(failure.get("message", "")), details=failure.get("details"))
    err.details_final = True
    return err
