"""Inserting a row a unique index guards, with a lost race answered as a conflict.

Handlers look for a duplicate before inserting, but a concurrent transaction can commit the
same row in between; the unique index then refuses the insert. :func:`add_unique` turns that
``IntegrityError`` (a 500) into the same 4xx the look-up gives.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.errors import WalletError


def add_unique(session: Session, row: object, exists: Callable[[], bool],
               conflict: Callable[[], WalletError]) -> None:
    """Add and flush ``row`` in a savepoint; on an integrity error, ``conflict()`` if ``exists()``.

    The caller has looked for the duplicate already (the common case costs no savepoint
    round trip more than that look-up).

    Raises:
        WalletError: ``conflict()`` after a unique violation from a concurrent insert.
        IntegrityError: Any other integrity error (no duplicate exists after all).
    """
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError as ex:
        if exists():
            raise conflict() from ex
        raise
