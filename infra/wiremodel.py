"""Base class for typed wire models (activity parameters, query bodies, results).

Python attributes are snake_case; the wire names are the swagger's camelCase. Unknown
fields are ignored (newer clients send more), explicit ``null`` means "absent".
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A model whose JSON form uses the swagger's camelCase names."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )

    def wire(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase, ``None`` fields dropped)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
