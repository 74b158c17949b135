"""Deleting sealed secrets: wallets (their seeds) and standalone private keys.

Both refuse to delete a secret that was never exported unless the request says
``deleteWithoutExport: true`` (a secret deleted unexported is gone for good), and both take
the rows derived from the secret (wallet accounts, private key addresses) with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import delete
from sqlalchemy.orm import InstrumentedAttribute, Session

from infra.errors import FailedPrecondition

Secret = TypeVar("Secret", bound=Any)


def deletable(session: Session, organization_id: str, ids: Sequence[str],
              find: Callable[[Session, str, str], Secret], *, noun: str,
              delete_without_export: bool | None) -> list[Secret]:
    """The secrets ``ids`` of the organization (``find`` raises a 404 for a stranger's), all
    exported unless ``delete_without_export``; else a failed precondition naming the rest."""
    secrets = [find(session, organization_id, secret_id) for secret_id in ids]
    if not delete_without_export:
        unexported = [s.id for s in secrets if not s.exported]
        if unexported:
            raise FailedPrecondition(
                f"{noun} not exported yet: {', '.join(unexported)}; export them first or "
                "send deleteWithoutExport: true"
            )
    return secrets


def delete_secrets(session: Session, secrets: Sequence[Any],
                   derived: InstrumentedAttribute[str]) -> list[str]:
    """Delete ``secrets`` and the rows whose ``derived`` column names one of them; their ids."""
    for secret in secrets:
        session.execute(delete(derived.class_).where(derived == secret.id))
        session.delete(secret)
    session.flush()
    return [secret.id for secret in secrets]
