"""Decoding untrusted JSON (request bodies, stamp headers) without ever raising a surprise.

``json.loads`` alone raises ``RecursionError`` on deeply nested input and ``ValueError`` on
integer literals longer than the interpreter's digit limit; and a ``\\u0000`` it accepts
is refused later by PostgreSQL (text and JSONB columns cannot hold NUL) while SQLite stores
it, and a lone surrogate escape (``\\ud800``) cannot be encoded for either database.
:func:`loads` turns every one of these into a :class:`MalformedJson` so callers answer 4xx,
and both databases see the same inputs.
"""

from __future__ import annotations

import json
from typing import Any, Final

#: Deepest nesting of arrays/objects accepted (Turnkey bodies nest a handful of levels).
MAX_DEPTH: Final = 64


class MalformedJson(ValueError):
    """The text is not JSON we accept; ``field`` is the offending path when one is known."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def loads(raw: bytes | str) -> Any:
    """Parse ``raw``; refuse invalid JSON, nesting over :data:`MAX_DEPTH`, NUL and lone surrogates.

    Raises:
        MalformedJson: with a message saying what is wrong (and ``field`` for NUL/depth).
    """
    try:
        data = json.loads(raw)
    except RecursionError as ex:
        raise MalformedJson(f"JSON nests deeper than {MAX_DEPTH} levels") from ex
    except (UnicodeDecodeError, ValueError) as ex:  # JSONDecodeError, too many integer digits
        raise MalformedJson(f"not valid JSON: {ex}") from ex
    check_tree(data)
    return data


def check_tree(data: Any) -> None:
    """Walk ``data`` (iteratively) refusing NUL or lone surrogates in strings/keys, deep nesting.

    Raises:
        MalformedJson: naming the path of the first offending value.
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            _check_text(value, path)
        elif isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                raise MalformedJson(f"JSON nests deeper than {MAX_DEPTH} levels",
                                    field=path or None)
            if isinstance(value, dict):
                for key, item in value.items():
                    shown = key.encode("utf-8", "backslashreplace").decode().replace("\x00", "\\u0000")
                    child = f"{path}.{shown}" if path else shown
                    _check_text(key, child)
                    stack.append((item, child, depth + 1))
            else:
                stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))


def _check_text(value: str, path: str) -> None:
    where = f"{path} " if path else ""
    if "\x00" in value:
        raise MalformedJson(f"{where}contains a NUL character (\\u0000); strings may not "
                            "contain NUL", field=path or None)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as ex:  # a lone surrogate escape such as \ud800
            raise MalformedJson(f"{where}contains an unpaired UTF-16 surrogate escape",
                                field=path or None) from ex
