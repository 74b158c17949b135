"""What a query handler is and receives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.orm import Session

from infra.auth.principal import Principal
from infra.wiremodel import WireModel

if TYPE_CHECKING:
    from infra.services import Services


@dataclass
class QueryContext:
    """A read-only view for one query: the session, who asks, and about which org."""

    session: Session
    principal: Principal
    organization_id: str
    now: datetime
    services: Services


@dataclass(frozen=True)
class QuerySpec:
    """One ``/public/v1/query/<path>``.

    Attributes:
        path: The query name.
        params: The typed request body model (includes ``organizationId``).
        run: ``run(params, ctx) -> response body``.
        sub_organization_credentials: A credential held by one of the organization's
            sub-organizations may stamp it and resolves to that sub-organization
            (PROTOCOL.md §1.4 downward resolution, e.g. ``whoami`` for the parent's id).
        document: For walletd's own queries (not in Turnkey's swagger): ``{"path": <swagger
            path item>, "definitions": {...}}`` served in the OpenAPI document.
    """

    path: str
    params: type[WireModel]
    run: Callable[[Any, QueryContext], dict[str, Any]]
    sub_organization_credentials: bool = False
    document: dict[str, Any] | None = None
