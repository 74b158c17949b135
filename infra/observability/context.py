"""The ids of the work the current thread is doing, for logs and messages.

Set by the ingress middleware (request id), the dramatiq middleware (the message's request
and activity ids) and the lifecycle listener (activity and organization ids of every activity
the thread creates or moves). Context variables: a thread or a request never sees another's.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Final

REQUEST_ID: ContextVar[str | None] = ContextVar("walletd_request_id", default=None)
ACTIVITY_ID: ContextVar[str | None] = ContextVar("walletd_activity_id", default=None)
ORGANIZATION_ID: ContextVar[str | None] = ContextVar("walletd_organization_id", default=None)

#: Log field name -> variable.
FIELDS: Final = {"request_id": REQUEST_ID, "activity_id": ACTIVITY_ID,
                 "organization_id": ORGANIZATION_ID}

_REQUEST_ID_FORM: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_from(header: str | None) -> str:
    """The caller's ``X-Request-Id`` when it is a plain token, else a new id."""
    if header and _REQUEST_ID_FORM.fullmatch(header):
        return header
    return uuid.uuid4().hex


def current() -> dict[str, str]:
    """The ids set in this context (only those that are set)."""
    values = {name: var.get() for name, var in FIELDS.items()}
    return {name: value for name, value in values.items() if value}


Tokens = list[tuple[ContextVar[str | None], Token[str | None]]]


def bind(**ids: str | None) -> Tokens:
    """Set ids (``request_id=…``, ``activity_id=…``, ``organization_id=…``); returns what
    :func:`unbind` needs to restore the previous values."""
    return [(FIELDS[name], FIELDS[name].set(value)) for name, value in ids.items()]


def unbind(tokens: Tokens) -> None:
    """Restore the values :func:`bind` replaced."""
    for var, token in reversed(tokens):
        var.reset(token)


@contextmanager
def bound(**ids: str | None) -> Iterator[None]:
    """``bind`` for the duration of a block."""
    tokens = bind(**ids)
    try:
        yield
    finally:
        unbind(tokens)
