"""Canonical JSON (RFC 8785 style) and the digests a leaf holds.

Objects' members are sorted by their names' UTF-16 code units, no insignificant whitespace,
strings as JSON escapes them minimally (non-ASCII kept as UTF-8). Leaves hold only strings,
integers, booleans, null, lists and objects; a float (which RFC 8785 would format the
ECMAScript way) is refused rather than formatted differently from other implementations.
Digests of stored JSON (intents, results) use the same form so a verifier reproduces them
from the row.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        items = sorted(((str(k), v) for k, v in value.items()),
                       key=lambda kv: kv[0].encode("utf-16-be"))
        return {k: _normalise(v) for k, v in items}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        raise ValueError("floats have no canonical form here")
    return value


def canonical(value: Any) -> bytes:
    """The canonical JSON encoding of ``value`` (UTF-8)."""
    return json.dumps(_normalise(value), ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode()


def digest(value: Any) -> str | None:
    """``sha256:<hex>`` of the canonical JSON of ``value`` (``None`` stays ``None``)."""
    if value is None:
        return None
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()
