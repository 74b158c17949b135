"""The served OpenAPI document: Turnkey's swagger cut down to the registries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from infra.activities import registry as activities
from infra.openapi import enum_values, swagger
from infra.openapi.document import _REF, _refs, served_document
from infra.queries import registry as queries

SHARED = Path(__file__).resolve().parents[4] / "shared" / "reference" / "public_api.swagger.json"


def test_vendored_swagger_is_the_shared_reference() -> None:
    if not SHARED.is_file():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{SHARED} is missing: CI runs with shared/ beside the checkout")
        pytest.skip(f"{SHARED} is missing (shared/ is not beside this checkout)")
    assert swagger() == json.loads(SHARED.read_text())


def test_paths_are_exactly_the_served_and_described_operations() -> None:
    doc = served_document()
    served = {f"/public/v1/submit/{p}" for p in activities().by_path} | {
        f"/public/v1/query/{p}" for p in queries()}
    # Turnkey's swagger describes its operations; walletd's own queries describe themselves.
    described = set(swagger()["paths"]) | {
        f"/public/v1/query/{p}" for p, spec in queries().items() if spec.document is not None}
    assert set(doc["paths"]) == served & described
    assert set(doc["x-walletd-undocumented-operations"]) == served - described
    assert all(set(item) == {"post"} for item in doc["paths"].values())


def test_submit_types_are_the_accepted_versions() -> None:
    doc = served_document()
    for path, item in doc["paths"].items():
        if not path.startswith("/public/v1/submit/"):
            continue
        spec = activities().by_path[path.rsplit("/", 1)[1]]
        accepted = {v.type for v in spec.versions}
        (body,) = item["post"]["parameters"]
        enum = doc["definitions"][body["schema"]["$ref"][len(_REF):]]["properties"]["type"]["enum"]
        assert enum and set(enum) <= accepted, path
        assert set(enum) | set(item["post"].get("x-walletd-also-accepts", [])) == accepted, path


def test_definitions_are_closed_and_minimal() -> None:
    doc = served_document()
    names = set(doc["definitions"])
    assert set(_refs(doc["definitions"])) | set(_refs(doc["paths"])) == names
    assert "v1ActivityType" in names and len(names) < len(swagger()["definitions"])


def test_enum_values_come_from_the_swagger() -> None:
    assert "ACTIVITY_TYPE_CREATE_WALLET" in enum_values("v1ActivityType")
    assert "ACTIVITY_STATUS_COMPLETED" in enum_values("v1ActivityStatus")
