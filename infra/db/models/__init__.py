"""Every table of walletd.

Each sibling module holds the tables of one concept and is imported here automatically, so
adding a concept means adding one module (plus its Alembic migration). ``Base.metadata`` is
complete once this package is imported.
"""

from __future__ import annotations

import importlib
import pkgutil

from infra.db.base import Base

for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")

__all__ = ["Base"]
