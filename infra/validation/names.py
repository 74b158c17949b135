"""Names given in free-form parameter dictionaries (not typed models)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.errors import InvalidRequest

#: The width of the name columns (``String(256)``).
MAX_NAME_LENGTH = 256


def required_name(params: Mapping[str, Any], key: str, field: str) -> str:
    """``params[key]``: a non-blank string of at most :data:`MAX_NAME_LENGTH` characters.

    Raises:
        InvalidRequest: missing, blank or too long, naming ``field.key``.
    """
    name = params.get(key)
    if not isinstance(name, str) or not name.strip():
        raise InvalidRequest(f"{key} is required", field=f"{field}.{key}")
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidRequest(f"{key} may be at most {MAX_NAME_LENGTH} characters", field=f"{field}.{key}")
    return name
