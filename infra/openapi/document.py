"""The OpenAPI document of what this deployment serves (``GET /public/v1/openapi.json``).

Cut from Turnkey's swagger (:func:`infra.openapi.swagger`), so field names, required fields,
enums and result shapes are Turnkey's own, and restricted by the registries:

- paths: only ``/public/v1/submit/<path>`` of a registered activity and
  ``/public/v1/query/<path>`` of a registered query that the swagger describes;
- each submit body's ``type`` enum: only the swagger's types this deployment accepts. Older
  versions a path still accepts (for older clients) are named in the operation's
  ``x-walletd-also-accepts``; their intents are the swagger's older intent definitions;
- definitions: only those the kept paths reach.

Served operations the swagger does not describe (walletd's own, or Turnkey's deprecated
ones) are listed under ``x-walletd-undocumented-operations`` rather than invented.
The document stays Swagger 2.0 (OpenAPI 2.0), the form Turnkey publishes.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from functools import cache
from typing import Any

from infra.activities import registry as activities
from infra.openapi import swagger
from infra.queries import registry as queries

SUBMIT = "/public/v1/submit/"
QUERY = "/public/v1/query/"
_REF = "#/definitions/"


def _refs(node: Any) -> Iterator[str]:
    """Every definition name ``node`` references directly."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            yield ref[len(_REF):]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def _reachable(roots: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    """The definitions reachable from ``roots``, by name."""
    seen: dict[str, Any] = {}
    todo = list(_refs(roots))
    while todo:
        name = todo.pop()
        if name in seen or name not in definitions:
            continue
        seen[name] = definitions[name]
        todo.extend(_refs(definitions[name]))
    return dict(sorted(seen.items()))


def _body_definition(operation: dict[str, Any]) -> str:
    """The definition name of a POST operation's body."""
    (body,) = [p for p in operation["parameters"] if p.get("in") == "body"]
    ref: str = body["schema"]["$ref"]
    return ref[len(_REF):]


@cache
def served_document() -> dict[str, Any]:
    """The document (built once per process; treat it as read-only)."""
    source = swagger()
    definitions = copy.deepcopy(source["definitions"])
    paths: dict[str, Any] = {}
    undocumented: list[str] = []
    for spec in activities().all():
        path = SUBMIT + spec.path
        if path not in source["paths"]:
            undocumented.append(path)
            continue
        item = copy.deepcopy(source["paths"][path])
        operation = item["post"]
        type_schema = definitions[_body_definition(operation)]["properties"]["type"]
        accepted = [v.type for v in spec.versions]
        type_schema["enum"] = [t for t in type_schema.get("enum", []) if t in accepted]
        others = [t for t in accepted if t not in type_schema["enum"]]
        if not type_schema["enum"]:
            undocumented.append(path)
            continue
        if others:
            operation["x-walletd-also-accepts"] = others
        paths[path] = item
    for name, query in sorted(queries().items()):
        path = QUERY + name
        if path in source["paths"]:
            paths[path] = copy.deepcopy(source["paths"][path])
        elif query.document is not None:  # walletd's own, described by its module
            paths[path] = copy.deepcopy(query.document["path"])
            definitions.update(copy.deepcopy(query.document["definitions"]))
        else:
            undocumented.append(path)
    used_tags = {t for item in paths.values() for op in item.values() for t in op.get("tags", ())}
    return {
        "swagger": "2.0",
        "info": {
            "title": "walletd public API",
            "version": source["info"].get("version", "1.0"),
            "description": "The operations this walletd deployment serves, as Turnkey's public "
                           "API describes them (a Turnkey client works unchanged).",
        },
        "consumes": source.get("consumes", ["application/json"]),
        "produces": source.get("produces", ["application/json"]),
        "paths": dict(sorted(paths.items())),
        "definitions": _reachable(paths, definitions),
        "securityDefinitions": source["securityDefinitions"],
        "security": source["security"],
        "tags": [t for t in source.get("tags", []) if t["name"] in used_tags],
        "x-walletd-undocumented-operations": sorted(undocumented),
    }


@cache
def served_document_bytes() -> bytes:
    """The document as the JSON body the ingress sends."""
    return json.dumps(served_document(), separators=(",", ":")).encode()
