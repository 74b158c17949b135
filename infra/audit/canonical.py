"""Canonical JSON (RFC 8785 style) and the digests a leaf holds.

Objects' members are sorted by their names' UTF-16 code units, no insignificant whitespace,
strings as JSON escapes them minimally (non-ASCII kept as UTF-8). Leaves themselves hold only
strings, integers, booleans, null, lists and objects. Stored intents and results may hold
numbers with fractions: an integral one is written as an integer, any other in Python's
shortest round-trip form, which equals RFC 8785's ECMAScript form except in exponent notation
(``1e-07`` for ``1e-7``); digests only need to be reproducible by the verifier, which uses
this module.
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
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what the JSON encoder already writes canonically: objects
    with ASCII names (code-point order is then UTF-16 order), lists, strings, integers,
    booleans and null; no numbers with fractions, no tuples."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii() or not _plain(item):
                return False
        return True
    if kind is list:
        return all(_plain(item) for item in value)
    return False


def canonical(value: Any) -> bytes:
    """The canonical JSON encoding of ``value`` (UTF-8).

    What leaves and digests hold is plain (see :func:`_plain`) almost always: the encoder's
    own key sort gives the canonical form directly, at half the cost of normalising first."""
    if _plain(value):
        return json.dumps(value, sort_keys=True, ensure_ascii=False,
                          separators=(",", ":")).encode()
    return json.dumps(_normalise(value), ensure_ascii=False, separators=(",", ":")).encode()


def digest(value: Any) -> str | None:
    """``sha256:<hex>`` of the canonical JSON of ``value`` (``None`` stays ``None``)."""
    if value is None:
        return None
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()
