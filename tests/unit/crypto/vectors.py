"""One loader for published test vectors.

Prefers the shared design repository (``../shared/vectors``) and falls back to the copies in
``tests/vectors`` so CI finds them either way. Files that exist only in ``tests/vectors``
(vectors quoted from PROTOCOL.md / CRYPTO.md) carry their own provenance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_REPO = Path(__file__).resolve().parents[3]
_SEARCH = (_REPO.parent / "shared" / "vectors", _REPO / "tests" / "vectors")


def load_vector(name: str) -> Any:
    """Parse the JSON vector file ``name`` from the first directory that has it."""
    for base in _SEARCH:
        path = base / name
        if path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
    raise FileNotFoundError(f"vector file {name} not found in {[str(p) for p in _SEARCH]}")
