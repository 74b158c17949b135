"""Turnkey's public API swagger, vendored as package data.

``public_api.swagger.json`` is a copy of ``../shared/reference/public_api.swagger.json``
(a test keeps the two equal); the service reads only this copy at run time. It is the wire
contract: enums the service validates against come from here (:func:`enum_values`), and
``infra.openapi.document`` cuts the served operations' OpenAPI document out of it.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

SWAGGER_FILE = "public_api.swagger.json"


@cache
def swagger() -> dict[str, Any]:
    """The whole swagger document (parsed once per process; treat it as read-only)."""
    text = resources.files(__name__).joinpath(SWAGGER_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def enum_values(definition: str) -> frozenset[str]:
    """The values of the swagger's enum ``definition`` (e.g. ``v1ActivityType``)."""
    return frozenset(swagger()["definitions"][definition]["enum"])


def check_enum(values: list[str] | None, definition: str) -> list[str] | None:
    """``values`` if every one is in the swagger enum ``definition``; a ``ValueError`` naming
    the first that is not (pydantic turns it into the 400 field violation)."""
    allowed = enum_values(definition)
    for value in values or ():
        if value not in allowed:
            raise ValueError(f"{value!r} is not a {definition} value")
    return values
