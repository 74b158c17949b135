"""Inserting a row a unique index guards, with a lost race answered as a conflict.

Handlers look for a duplicate before inserting, but a concurrent transaction can commit the
same row in between; the unique index then refuses the insert. :func:`add_unique` turns that
``IntegrityError`` (a 500) into the same 4xx the look-up gives.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from infra.errors import WalletError


def add_unique(session: Session, row: object, duplicate: Select[Any],
               conflict: WalletError) -> None:
    """Add and flush ``row`` in a savepoint, unless ``duplicate`` finds a row: then ``conflict``.

    ``duplicate`` is looked up first (the common case), and again after a unique violation
    from a concurrent insert.

    Raises:
        WalletError: ``conflict``, when ``duplicate`` finds a row before or after the insert.
        IntegrityError: Any other integrity error (no duplicate exists after all).
    """
    if session.scalar(duplicate) is not None:
        raise conflict
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError as ex:
        if session.scalar(duplicate) is not None:
            raise conflict from ex
        raise
