"""The client address of the HTTP request this thread is serving.

Bound by the ingress (``ingress.middleware.ClientOrigin``) from the peer address and the
same trusted ``X-Forwarded-For`` hops the rate limiter uses
(``WALLETD_RATE_LIMIT_FORWARDED_HOPS``), so both see one address. Unbound outside a request
(workers, the CLI): per-request controls then have nothing to check.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

CLIENT_ADDRESS: ContextVar[str | None] = ContextVar("walletd_client_address", default=None)


def client_address_of(peer: str, forwarded_for: str | None, hops: int) -> str:
    """The peer address, or the one ``hops`` trusted proxies wrote into X-Forwarded-For."""
    if hops <= 0:
        return peer
    forwarded = [a.strip() for a in (forwarded_for or "").split(",")]
    route = [a for a in forwarded if a] + [peer]
    return route[-(hops + 1)] if len(route) > hops else route[0]


def bind(address: str) -> Token[str | None]:
    """Serve a request from ``address`` (returns what :func:`unbind` needs)."""
    return CLIENT_ADDRESS.set(address)


def unbind(token: Token[str | None]) -> None:
    CLIENT_ADDRESS.reset(token)


def current() -> str | None:
    """The address of the request being served (``None`` outside a request)."""
    return CLIENT_ADDRESS.get()
