"""Parse policy expressions (``condition``, ``consensus``, ``time``) into syntax trees.

The grammar lives in ``grammar.lark`` and is parsed with lark's LALR parser. Anything that is
not a valid expression raises :class:`InvalidPolicyExpression` (an ``InvalidRequest``, so a 400
on the wire) whose message names the field and the line/column of the problem. That is the
only exception :func:`parse` raises.

Besides syntax, parsing checks what can be known without variables: only known keywords (or a
predicate's bound item) are referenced, functions exist and get the right arguments,
``Timestamp``/``CronSpan`` arguments are valid, ints fit in u256, and trees are not deeper than
:data:`~infra.policy.nodes.MAX_DEPTH`.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import lru_cache
from importlib import resources
from typing import Any, cast

from lark import Lark, Token, Transformer
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from infra.errors import InvalidRequest
from infra.policy import nodes
from infra.policy.cron import CronSpan, InvalidCronSpan
from infra.policy.nodes import MAX_DEPTH, Expression, Node, Position

MAX_LENGTH = 16_384
MAX_UINT = 2**256 - 1
MIN_INT = -(2**127)

# Every keyword the language knows (PROTOCOL.md §8.3). Chain namespaces (`eth`, `solana`, …)
# are roots whose fields are the per-chain payloads.
KEYWORDS = frozenset(
    {
        "approvers", "credentials", "activity", "wallet", "wallets", "wallet_account",
        "private_key", "eth", "solana", "tron", "bitcoin", "tempo", "time", "secrets",
    }
)  # fmt: skip
PREDICATES = frozenset({"all", "any", "filter"})
_RFC3339_UTC = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(?:[Zz]|[+-]00:00)"
)


class InvalidPolicyExpression(InvalidRequest):
    """A policy expression does not parse; the message points at line and column."""

    code = "invalid_policy_expression"

    def __init__(self, message: str, *, field: str, line: int, column: int) -> None:
        name = field.rsplit(".", 1)[-1]
        super().__init__(
            f"invalid policy {name}: {message} at line {line}, column {column}", field=field
        )
        self.line = line
        self.column = column


class _Refused(Exception):
    """Raised inside the tree builder; :func:`parse` re-raises it with the field name."""

    def __init__(self, message: str, pos: Position) -> None:
        super().__init__(message)
        self.message = message
        self.pos = pos


def parse_timestamp(text: str) -> datetime:
    """RFC 3339 with a zero UTC offset (``Z``, ``z``, ``+00:00``, ``-00:00``) → aware datetime."""
    match = _RFC3339_UTC.fullmatch(text)
    if not match:
        raise ValueError(f"Timestamp {text!r}: expected RFC 3339 with a zero UTC offset")
    day, clock, fraction = match.groups()
    micro = (fraction or "").ljust(6, "0")[:6]
    return datetime.fromisoformat(f"{day}T{clock}.{micro}+00:00")


def _pos(item: Any) -> Position:
    if isinstance(item, Token):
        return Position(item.line or 1, item.column or 1)
    pos: Position = item.pos
    return pos


def _depth(*children: Any) -> int:
    depth = 1 + max((c.depth for c in children if not isinstance(c, Token)), default=0)
    if depth > MAX_DEPTH:
        raise _Refused(f"expression nested deeper than {MAX_DEPTH}", _pos(children[0]))
    return depth


def _unquote(token: Token) -> str:
    return re.sub(r"\\(.)", r"\1", str(token)[1:-1], flags=re.DOTALL)


class _TreeBuilder(Transformer[Token, Node]):
    """lark callbacks (run inline while parsing) that build :mod:`infra.policy.nodes`."""

    def int_literal(self, c: list[Token]) -> nodes.Literal:
        value = int(c[0])
        if value > MAX_UINT:
            raise _Refused("integer literal does not fit in 256 bits", _pos(c[0]))
        return nodes.Literal(value, _pos(c[0]))

    def negative_int_literal(self, c: list[Token]) -> nodes.Literal:
        value = -int(c[1])
        if value < MIN_INT:
            raise _Refused("integer literal does not fit in i128", _pos(c[0]))
        return nodes.Literal(value, _pos(c[0]))

    def string_literal(self, c: list[Token]) -> nodes.Literal:
        return nodes.Literal(_unquote(c[0]), _pos(c[0]))

    def true_literal(self, c: list[Token]) -> nodes.Literal:
        return nodes.Literal(True, _pos(c[0]))

    def false_literal(self, c: list[Token]) -> nodes.Literal:
        return nodes.Literal(False, _pos(c[0]))

    def list_literal(self, c: list[Any]) -> nodes.ListLiteral:
        items = tuple(i for i in c[1:] if i is not None)
        return nodes.ListLiteral(items, _pos(c[0]), _depth(c[0], *items))

    def entry(self, c: list[Any]) -> tuple[str, Node]:
        return (str(c[0]), c[1])

    def struct_literal(self, c: list[Any]) -> nodes.StructLiteral:
        entries = tuple(e for e in c[1:] if e is not None)
        keys = [k for k, _ in entries]
        if len(set(keys)) != len(keys):
            raise _Refused("duplicate key in struct literal", _pos(c[0]))
        return nodes.StructLiteral(entries, _pos(c[0]), _depth(c[0], *(v for _, v in entries)))

    def name(self, c: list[Token]) -> nodes.Name:
        return nodes.Name(str(c[0]), _pos(c[0]))

    def arguments(self, c: list[Node]) -> list[Node]:
        return list(c)

    def field(self, c: list[Any]) -> nodes.Field:
        return nodes.Field(c[0], str(c[1]), _pos(c[1]), _depth(c[0]))

    def index(self, c: list[Node]) -> nodes.Index:
        return nodes.Index(c[0], c[1], c[1].pos, _depth(*c))

    def slice(self, c: list[Node]) -> nodes.Slice:
        return nodes.Slice(c[0], c[1], c[2], c[1].pos, _depth(*c))

    def method(self, c: list[Any]) -> Node:
        target, name, args = c[0], str(c[1]), (c[2] or []) if len(c) > 2 else []
        pos = _pos(c[1])
        if name in PREDICATES:
            if len(args) != 2 or not isinstance(args[0], nodes.Name):
                raise _Refused(f"{name}() takes an item name and a predicate", pos)
            return nodes.Predicate(name, target, args[0].name, args[1], pos, _depth(target, *args))
        if name == "contains":
            if len(args) != 1:
                raise _Refused("contains() takes exactly one value", pos)
            return nodes.Contains(target, args[0], pos, _depth(target, args[0]))
        if name == "count":
            if args:
                raise _Refused("count() takes no arguments", pos)
            return nodes.Count(target, pos, _depth(target))
        raise _Refused(f"unknown function {name!r}", pos)

    def call(self, c: list[Any]) -> Node:
        name, args = str(c[0]), (c[1] or []) if len(c) > 1 else []
        pos = _pos(c[0])
        strings = [a.value for a in args if isinstance(a, nodes.Literal) and type(a.value) is str]
        if len(strings) != len(args):
            raise _Refused(f"{name}() takes string literals only", pos)
        if name == "Timestamp" and len(strings) == 1:
            try:
                return nodes.Literal(parse_timestamp(strings[0]), pos)
            except ValueError as ex:
                raise _Refused(str(ex), pos) from ex
        if name == "CronSpan" and len(strings) == 3:
            try:
                return nodes.CronSpanCall(CronSpan.parse(*strings), pos)
            except InvalidCronSpan as ex:
                raise _Refused(f"CronSpan: {ex}", pos) from ex
        if name in ("Timestamp", "CronSpan"):
            raise _Refused(f"{name}() takes {1 if name == 'Timestamp' else 3} arguments", pos)
        raise _Refused(f"unknown function {name!r}", pos)

    def compare(self, c: list[Any]) -> nodes.Compare:
        return nodes.Compare(str(c[1]), c[0], c[2], _pos(c[1]), _depth(c[0], c[2]))

    def member(self, c: list[Node]) -> nodes.Member:
        return nodes.Member(c[0], c[1], c[0].pos, _depth(*c))

    def and_op(self, c: list[Any]) -> nodes.And:
        return nodes.And(c[0], c[2], _pos(c[1]), _depth(c[0], c[2]))

    def or_op(self, c: list[Any]) -> nodes.Or:
        return nodes.Or(c[0], c[2], _pos(c[1]), _depth(c[0], c[2]))

    def not_op(self, c: list[Any]) -> nodes.Not:
        return nodes.Not(c[1], _pos(c[0]), _depth(c[1]))


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files("infra.policy").joinpath("grammar.lark").read_text("utf-8")
    return Lark(grammar, parser="lalr", transformer=_TreeBuilder(), maybe_placeholders=True)


def _free_names(node: Node, bound: frozenset[str], found: set[str]) -> None:
    """Collect keywords used by ``node``; refuse names that are neither keywords nor bound."""
    if isinstance(node, nodes.Name):
        if node.name not in bound:
            if node.name not in KEYWORDS:
                raise _Refused(f"unknown keyword {node.name!r}", node.pos)
            found.add(node.name)
        return
    if isinstance(node, nodes.Predicate):
        _free_names(node.target, bound, found)
        if node.item in KEYWORDS:
            raise _Refused(f"item name {node.item!r} shadows a keyword", node.pos)
        _free_names(node.body, bound | {node.item}, found)
        return
    for child in _children(node):
        _free_names(child, bound, found)


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, nodes.ListLiteral):
        return node.items
    if isinstance(node, nodes.StructLiteral):
        return tuple(v for _, v in node.entries)
    if isinstance(node, (nodes.Field, nodes.Count)):
        return (node.target,)
    if isinstance(node, nodes.Index):
        return (node.target, node.index)
    if isinstance(node, nodes.Slice):
        return (node.target, node.start, node.end)
    if isinstance(node, nodes.Contains):
        return (node.target, node.value)
    if isinstance(node, (nodes.Compare, nodes.Member, nodes.And, nodes.Or)):
        return (node.left, node.right)
    if isinstance(node, nodes.Not):
        return (node.operand,)
    return ()


def _describe(error: UnexpectedInput, text: str) -> str:
    if isinstance(error, UnexpectedEOF):
        return "unexpected end of expression"
    if isinstance(error, UnexpectedCharacters):
        index = error.pos_in_stream or 0
        return f"unexpected character {text[index : index + 1]!r}"
    token = getattr(error, "token", None)
    if token is None or token.type == "$END":
        return "unexpected end of expression"
    return f"unexpected {str(token)!r}"


def _token_type(error: UnexpectedInput) -> str:
    return str(getattr(getattr(error, "token", None), "type", ""))


def _end_position(text: str) -> tuple[int, int]:
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def parse(text: str, *, field: str = "condition") -> Expression:
    """Parse one expression; raises :class:`InvalidPolicyExpression` and nothing else.

    Args:
        text: the expression source.
        field: which policy field it came from (``condition``, ``consensus``, ``time``); used
            in the error message and the 400's field violation.
    """
    if len(text) > MAX_LENGTH:
        raise InvalidPolicyExpression(
            f"longer than {MAX_LENGTH} characters", field=field, line=1, column=1
        )
    try:
        root = cast(Node, _lark().parse(text))
        found: set[str] = set()
        _free_names(root, frozenset(), found)
    except _Refused as ex:
        raise InvalidPolicyExpression(
            ex.message, field=field, line=ex.pos.line, column=ex.pos.column
        ) from None
    except UnexpectedInput as ex:
        line, column = ex.line, ex.column
        at_end = isinstance(ex, UnexpectedEOF) or _token_type(ex) == "$END"
        if at_end or not isinstance(line, int) or line < 1:
            line, column = _end_position(text)
        raise InvalidPolicyExpression(
            _describe(ex, text), field=field, line=line, column=column
        ) from None
    except (LarkError, RecursionError, ValueError) as ex:
        line, column = _end_position(text)
        raise InvalidPolicyExpression(
            f"cannot parse ({type(ex).__name__})", field=field, line=line, column=column
        ) from None
    return Expression(text, root, frozenset(found))
