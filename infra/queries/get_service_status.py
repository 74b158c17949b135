"""``get_service_status`` (walletd's own query): what the operator's console shows about the
service itself, authenticated like any query and readable by the operator only (a credential
of a top-level organization, ``infra.queries._operator``; a sub-organization's gets 403).

Answers ``{walletdVersion, apiVersion, databaseDialect, databaseRevision, broker}``:
walletd's package version, the version of the public API it serves (the swagger's
``info.version``), the database dialect and its Alembic revision, and the broker kind
(``amqp``, ``redis`` or ``memory``). No address, credential or host name is answered.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from infra.openapi import swagger
from infra.queries._operator import require_operator
from infra.queries.spec import QueryContext, QuerySpec
from infra.wiremodel import WireModel


class Params(WireModel):
    organization_id: str


def _version() -> str:
    try:
        return metadata.version("walletd")
    except metadata.PackageNotFoundError:
        return "unknown"


def _revision(ctx: QueryContext) -> str:
    try:
        return str(ctx.session.execute(text("SELECT version_num FROM alembic_version")).scalar() or "")
    except SQLAlchemyError:
        return ""


def run(params: Params, ctx: QueryContext) -> dict[str, Any]:
    require_operator(ctx, "get_service_status")
    broker = ctx.services.settings.broker_url.split(":", 1)[0].lower()
    return {
        "walletdVersion": _version(),
        "apiVersion": str(swagger().get("info", {}).get("version", "")),
        "databaseDialect": ctx.session.get_bind().dialect.name,
        "databaseRevision": _revision(ctx),
        "broker": {"amqps": "amqp", "rediss": "redis"}.get(broker, broker),
    }


SPEC = QuerySpec(path="get_service_status", params=Params, run=run)
