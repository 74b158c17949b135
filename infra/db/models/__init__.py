"""Every table of walletd.

Each sibling module holds the tables of one concept and is imported here automatically, so
adding a concept means adding one module (plus its Alembic migration). ``Base.metadata`` is
complete once this package is imported.
"""

from __future__ import annotations

import importlib
import pkgutil

from infra.db.base import Base
from infra.db.triggers import install_on_create_all

for _mod in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_mod.name}")

install_on_create_all(Base.metadata)

__all__ = ["Base"]
