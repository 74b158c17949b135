"""Base class for typed wire models (activity parameters, query bodies, results).

Python attributes are snake_case; the wire names are the swagger's camelCase. Unknown
fields are ignored (newer clients send more). A request body (validated with
:data:`WIRE_CONTEXT`, as ``infra.submit_body.validate_model`` does) may leave a field out but
not send it as ``null``: the swagger types none of them nullable (the official clients drop
absent fields), except those a model lists in ``NULLABLE``. Nor may it send a boolean or
an integer field in another JSON type (pydantic would read ``0`` as ``false`` and ``"5"``
as ``5``; the swagger types them ``boolean`` and ``integer``).
"""

from __future__ import annotations

import types
from functools import cache
from typing import Any, ClassVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel

#: Validation context for request bodies: explicit ``null`` is refused.
WIRE_CONTEXT: dict[str, Any] = {"wire": True}


@cache
def _strict_type(annotation: Any) -> type | None:
    """``bool`` or ``int`` when a field is one of them (optional or not), else ``None``."""
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = [a for a in get_args(annotation) if a is not type(None)]
        return _strict_type(kinds[0]) if len(kinds) == 1 else None
    return annotation if annotation in (bool, int) else None


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
        if not (info.context and info.context.get("wire")) or info.field_name is None:
            return value
        if value is None:
            if info.field_name not in cls.NULLABLE:
                raise ValueError("null is not a value here: send a value or leave the field out")
            return value
        annotation: Any = cls.model_fields[info.field_name].annotation
        kind = _strict_type(annotation)
        if kind is bool and not isinstance(value, bool):
            raise ValueError("send true or false")
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError("send a JSON integer")
        return value

    def wire(self) -> dict[str, Any]:
        """The JSON-ready wire form (camelCase, ``None`` fields dropped)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")
