"""Syntax-tree nodes of the policy language.

Every node is a frozen dataclass carrying the ``line``/``column`` (1-based) where it starts, so
evaluation errors can point at the clause that failed. ``depth`` is the height of the subtree;
the parser refuses trees deeper than :data:`MAX_DEPTH`, which bounds every recursive walk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from infra.policy.cron import CronSpan

MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Position:
    """Where a node starts in the source text (1-based)."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column}"


@dataclass(frozen=True, slots=True)
class Literal:
    """A bool, int, string or timestamp constant."""

    value: bool | int | str | datetime
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class ListLiteral:
    """``[a, b, …]``."""

    items: tuple[Node, ...]
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class StructLiteral:
    """``{ key: value, … }``."""

    entries: tuple[tuple[str, Node], ...]
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Name:
    """A variable: a keyword such as ``activity`` or a predicate's bound item."""

    name: str
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Field:
    """``target.name``."""

    target: Node
    name: str
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Index:
    """``target[index]`` on lists, strings and maps."""

    target: Node
    index: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Slice:
    """``target[start..end]`` (end exclusive) on lists and strings."""

    target: Node
    start: Node
    end: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Predicate:
    """``list.<function>(item, body)`` for ``all``, ``any`` and ``filter``."""

    function: str
    target: Node
    item: str
    body: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Contains:
    """``target.contains(value)``."""

    target: Node
    value: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Count:
    """``target.count()``."""

    target: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class CronSpanCall:
    """``CronSpan('<cron>', '<duration>', '<tz>')``, validated at parse time."""

    span: CronSpan
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Compare:
    """``left <op> right`` with op in ``== != < > <= >=``."""

    op: str
    left: Node
    right: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Member:
    """``left in right``."""

    left: Node
    right: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class And:
    """``left && right`` (both sides are always evaluated)."""

    left: Node
    right: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Or:
    """``left || right`` (both sides are always evaluated)."""

    left: Node
    right: Node
    pos: Position
    depth: int = 1


@dataclass(frozen=True, slots=True)
class Not:
    """``!operand``."""

    operand: Node
    pos: Position
    depth: int = 1


Node: TypeAlias = (
    Literal
    | ListLiteral
    | StructLiteral
    | Name
    | Field
    | Index
    | Slice
    | Predicate
    | Contains
    | Count
    | CronSpanCall
    | Compare
    | Member
    | And
    | Or
    | Not
)


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed policy expression: its source text and the root node."""

    source: str
    root: Node
    names: frozenset[str] = field(default_factory=frozenset)
