"""THE activity-type registry.

Every sibling module that defines ``SPEC`` (an :class:`ActivitySpec`) is registered on first
use; duplicate paths or types are refused. Adding a type means adding one module.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import MappingProxyType

from infra.activities.spec import ActivitySpec, Version
from infra.policy.variables import ResourceAction

_NOT_TYPES = {"spec", "lifecycle", "render", "common", "waiter"}


class Registry:
    """Frozen after discovery: lookups by path and by type name."""

    def __init__(self, specs: list[ActivitySpec]) -> None:
        by_path: dict[str, ActivitySpec] = {}
        by_type: dict[str, tuple[ActivitySpec, Version]] = {}
        for spec in specs:
            if spec.path in by_path:
                raise TypeError(f"duplicate activity path {spec.path!r}")
            by_path[spec.path] = spec
            for version in spec.versions:
                if version.type in by_type:
                    raise TypeError(f"duplicate activity type {version.type!r}")
                by_type[version.type] = (spec, version)
        self.by_path = MappingProxyType(by_path)
        self.by_type = MappingProxyType(by_type)

    def resource_action(self, type_name: str) -> ResourceAction | None:
        """What policies read as ``activity.resource`` / ``action`` of ``type_name``: its
        spec's (``None``: a type without one, or not served)."""
        found = self.by_type.get(type_name)
        return found[0].resource_action if found is not None else None

    def all(self) -> list[ActivitySpec]:
        """Every registered spec, by path."""
        return [self.by_path[p] for p in sorted(self.by_path)]


def discover() -> Registry:
    """Import every sibling module and collect their ``SPEC``."""
    specs = []
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name in _NOT_TYPES or mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{mod.name}")
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, ActivitySpec):
            specs.append(spec)
    return Registry(specs)


_registry: Registry | None = None


def registry() -> Registry:
    """The process-wide registry (discovered once)."""
    global _registry
    if _registry is None:
        _registry = discover()
    return _registry
