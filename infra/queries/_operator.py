"""Queries about the service itself answer its operator only.

The operator is whoever holds a credential of a top-level organization (one with no parent):
the deployment's root organization and the organizations its operator creates. A
sub-organization's credential (an end user's, or one minted by an anonymous sign-up through
the auth proxy) is refused: the seal's type and live unseal progress, walletd's exact version
and the schema revision tell an attacker when to strike and which weakness to try.
"""

from __future__ import annotations

from sqlalchemy import select

from infra.db.models.organizations import Organization
from infra.errors import PermissionDenied
from infra.queries.spec import QueryContext


def require_operator(ctx: QueryContext, query: str) -> None:
    """Refuse ``query`` unless the caller's credential lives in a top-level organization.

    Raises:
        PermissionDenied: the credential belongs to a sub-organization (403).
    """
    row = ctx.session.execute(select(Organization.parent_id).where(
        Organization.id == ctx.principal.organization_id)).first()
    if row is None or row.parent_id is not None:
        raise PermissionDenied(f"{query} is for the operator: only a credential of a top-level "
                               "organization may read it, not one of a sub-organization")
