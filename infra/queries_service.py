"""Answering ``POST /public/v1/query/<path>``: authenticate, authorize, validate, run read-only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.access.guard import QUERY, authorize
from infra.auth.principal import authenticate
from infra.clock import now
from infra.errors import NotFound
from infra.queries import registry
from infra.queries.spec import QueryContext
from infra.services import Services
from infra.submit_body import organization_id_of, parse_json_object, validate_model


def query(services: Services, path: str, headers: Mapping[str, str], body: bytes,
          parsed: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run one query. A credential of the organization or of an ancestor may read.
    ``parsed``: ``body`` already parsed as a JSON object by whoever read it first."""
    spec = registry().get(path)
    if spec is None:
        raise NotFound(f"unknown query endpoint /public/v1/query/{path}")
    data = parsed if parsed is not None else parse_json_object(body)
    organization_id = organization_id_of(data)
    moment = now()
    with services.read_session_factory() as session:
        principal = authenticate(session, headers, body, organization_id, moment,
                                 stamps=services.stamps,
                                 resolve_sub_organizations=spec.sub_organization_credentials)
        # A query is authorized as a query, whatever its body carries (docs/ACCESS.md).
        authorize(session, principal, QUERY)
        params = validate_model(spec.params, data, "body")
        ctx = QueryContext(session, principal, organization_id, moment, services)
        return spec.run(params, ctx)
