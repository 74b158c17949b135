"""Base class for typed wire models (activity parameters, query bodies, results).

Python attributes are snake_case; the wire names are the swagger's camelCase. Unknown
fields are ignored (newer clients send more). A request body (validated with
:data:`WIRE_CONTEXT`, as ``infra.envelope.validate_model`` does) may leave a field out but
not send it as ``null``: the swagger types none of them nullable (the official clients drop
absent fields), except those a model lists in ``NULLABLE``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

#: Validation context for request bodies: explicit ``null`` is refused.
WIRE_CONTEXT: dict[str, Any] = {"wire": True}


class WireModel(BaseModel):
    """A model whose JSON form uses the swagger's camelCase names."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )

    #: Python names of the fields the swagger marks ``x-nullable``.
    NULLABLE: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def _refuse_null(cls, value: Any, info: ValidationInfo) -> Any:
        if (value is None and info.context and info.context.get("wire")
                and info.field_name not in cls.NULLABLE):
            raise ValueError("null is not a value here: send a value or leave the field out")
        return value

    def wire(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase, ``None`` fields dropped)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
