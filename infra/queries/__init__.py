"""The query registry: ``POST /public/v1/query/<path>``.

Each sibling module defines ``SPEC`` (a :class:`QuerySpec`); discovered like activities.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import MappingProxyType

from infra.queries.spec import QuerySpec

_NOT_QUERIES = {"spec", "pagination"}
_registry: MappingProxyType[str, QuerySpec] | None = None


def registry() -> MappingProxyType[str, QuerySpec]:
    """Query specs by path (discovered once; duplicates refused)."""
    global _registry
    if _registry is None:
        found: dict[str, QuerySpec] = {}
        for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
            if mod.name in _NOT_QUERIES or mod.name.startswith("_"):
                continue
            spec = getattr(importlib.import_module(f"{__name__}.{mod.name}"), "SPEC", None)
            if isinstance(spec, QuerySpec):
                if spec.path in found:
                    raise TypeError(f"duplicate query path {spec.path!r}")
                found[spec.path] = spec
        _registry = MappingProxyType(found)
    return _registry
