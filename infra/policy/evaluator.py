"""Evaluate parsed policy expressions against a mapping of variables.

The language is strongly typed and never short-circuits (PROTOCOL.md §8.2): both sides of
``&&``/``||`` and every predicate item are evaluated, so a clause that cannot be evaluated
(a missing field such as ``wallet`` when the activity signs with a private key, an index out of
range, comparing a string with an int, a result that is not a bool) makes the whole expression
fail. Every such problem raises :class:`PolicyEvaluationFailed`, which callers record as
``OUTCOME_ERROR``; :func:`evaluate` raises nothing else.

Values are plain Python data: ``bool``, ``int``, ``str``, lists (or tuples), mappings (structs
and maps) and timezone-aware ``datetime`` (timestamps). ``None`` counts as a missing value.
Expressions are compiled once into closures (:func:`compile_expression`), so evaluating a
policy many times costs no tree walking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from infra.errors import WalletError
from infra.policy import nodes
from infra.policy.nodes import Expression, Node, Position
from infra.policy.parser import parse

Env = Mapping[str, Any]
Compiled = Callable[[Env], Any]


class PolicyEvaluationFailed(WalletError):
    """An expression could not be evaluated; the policy's outcome is ``OUTCOME_ERROR``."""

    code = "policy_evaluation_failed"

    def __init__(self, message: str, pos: Position | None = None) -> None:
        super().__init__(f"{message} at {pos}" if pos else message)
        self.pos = pos


def _kind(value: Any) -> str:
    if value is None:
        return "missing"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, str):
        return "string"
    if isinstance(value, datetime):
        return "timestamp"
    if isinstance(value, Mapping):
        return "struct"
    if isinstance(value, (list, tuple)):
        return "list"
    return type(value).__name__


def _expect(value: Any, kind: str, pos: Position, what: str) -> Any:
    if _kind(value) != kind:
        raise PolicyEvaluationFailed(f"{what} must be a {kind}, not {_kind(value)}", pos)
    return value


def _equal(left: Any, right: Any) -> bool:
    """Strict equality: values of different kinds are never equal."""
    kind = _kind(left)
    if kind != _kind(right):
        return False
    if kind == "list":
        if len(left) != len(right):
            return False
        return all(_equal(a, b) for a, b in zip(left, right, strict=True))
    if kind == "struct":
        return left.keys() == right.keys() and all(_equal(left[k], right[k]) for k in left)
    return bool(left == right)


def _compare(op: str, left: Any, right: Any, pos: Position) -> bool:
    lk, rk = _kind(left), _kind(right)
    if lk != rk or lk == "missing":
        raise PolicyEvaluationFailed(f"cannot compare {lk} {op} {rk}", pos)
    if op == "==":
        return _equal(left, right)
    if op == "!=":
        return not _equal(left, right)
    if lk not in ("int", "timestamp"):
        raise PolicyEvaluationFailed(f"{op} needs ints or timestamps, not {lk}", pos)
    if op == "<":
        return bool(left < right)
    if op == ">":
        return bool(left > right)
    if op == "<=":
        return bool(left <= right)
    return bool(left >= right)


def _field(value: Any, name: str, pos: Position) -> Any:
    if not isinstance(value, Mapping):
        raise PolicyEvaluationFailed(f"MissingField: {_kind(value)} has no field {name!r}", pos)
    if value.get(name) is None:
        raise PolicyEvaluationFailed(f"MissingField: {name!r}", pos)
    return value[name]


def _position(index: Any, length: int, pos: Position) -> int:
    _expect(index, "int", pos, "index")
    if not 0 <= index < length:
        raise PolicyEvaluationFailed(f"index {index} out of range (length {length})", pos)
    return int(index)


def _index(target: Any, index: Any, pos: Position) -> Any:
    kind = _kind(target)
    if kind == "struct":
        key = _expect(index, "string", pos, "map key")
        if target.get(key) is None:
            raise PolicyEvaluationFailed(f"MissingField: {key!r}", pos)
        return target[key]
    if kind in ("list", "string"):
        item = target[_position(index, len(target), pos)]
        if item is None:
            raise PolicyEvaluationFailed("MissingField: list item is missing", pos)
        return item
    raise PolicyEvaluationFailed(f"cannot index a {kind}", pos)


def _slice(target: Any, start: Any, end: Any, pos: Position) -> Any:
    kind = _kind(target)
    if kind not in ("list", "string"):
        raise PolicyEvaluationFailed(f"cannot slice a {kind}", pos)
    _expect(start, "int", pos, "slice start")
    _expect(end, "int", pos, "slice end")
    if not 0 <= start <= end <= len(target):
        raise PolicyEvaluationFailed(
            f"slice {start}..{end} out of range (length {len(target)})", pos
        )
    return list(target[start:end]) if kind == "list" else target[start:end]


def _compile_predicate(node: nodes.Predicate) -> Compiled:
    target, body, item, function, pos = (
        _compile(node.target), _compile(node.body), node.item, node.function, node.pos,
    )  # fmt: skip

    def run(env: Env) -> Any:
        items = _expect(target(env), "list", pos, f"{function}() target")
        scope = dict(env)
        results = []
        for value in items:
            scope[item] = value
            results.append(_expect(body(scope), "bool", pos, f"{function}() predicate"))
        if function == "all":
            return all(results)
        if function == "any":
            return any(results)
        return [v for v, keep in zip(items, results, strict=True) if keep]

    return run


def _compile_contains(node: nodes.Contains) -> Compiled:
    target, needle, pos = _compile(node.target), _compile(node.value), node.pos

    def run(env: Env) -> bool:
        haystack, value = target(env), needle(env)
        if _kind(haystack) == "string":
            return _expect(value, "string", pos, "contains() value") in haystack
        _expect(haystack, "list", pos, "contains() target")
        return any(_equal(v, value) for v in haystack)

    return run


def _compile_member(node: nodes.Member) -> Compiled:
    left, right, pos = _compile(node.left), _compile(node.right), node.pos

    def run(env: Env) -> bool:
        value, items = left(env), right(env)
        if _kind(value) == "missing":
            raise PolicyEvaluationFailed("MissingField: left side of 'in'", pos)
        return any(_equal(value, v) for v in _expect(items, "list", pos, "right side of 'in'"))

    return run


def _compile_logic(node: nodes.And | nodes.Or) -> Compiled:
    left, right, pos = _compile(node.left), _compile(node.right), node.pos
    name = "&&" if isinstance(node, nodes.And) else "||"

    def run(env: Env) -> bool:
        # No short circuit: both sides always run, so an error anywhere is an error.
        a = _expect(left(env), "bool", pos, f"left side of {name}")
        b = _expect(right(env), "bool", pos, f"right side of {name}")
        return (a and b) if name == "&&" else (a or b)

    return run


def _compile_name(node: nodes.Name) -> Compiled:
    name, pos = node.name, node.pos

    def run(env: Env) -> Any:
        value = env.get(name)
        if value is None:
            raise PolicyEvaluationFailed(f"MissingField: {name!r}", pos)
        return value

    return run


def _compile_cron(node: nodes.CronSpanCall) -> Compiled:
    span, pos = node.span, node.pos

    def run(env: Env) -> bool:
        now = _expect(_field(env.get("time"), "now", pos), "timestamp", pos, "time.now")
        return span.contains(now)

    return run


def _compile(node: Node) -> Compiled:
    pos = node.pos
    if isinstance(node, nodes.Literal):
        value = node.value
        return lambda env: value
    if isinstance(node, nodes.ListLiteral):
        items = [_compile(i) for i in node.items]
        return lambda env: [i(env) for i in items]
    if isinstance(node, nodes.StructLiteral):
        entries = [(k, _compile(v)) for k, v in node.entries]
        return lambda env: {k: v(env) for k, v in entries}
    if isinstance(node, nodes.Name):
        return _compile_name(node)
    if isinstance(node, nodes.Field):
        target, name = _compile(node.target), node.name
        return lambda env: _field(target(env), name, pos)
    if isinstance(node, nodes.Index):
        target, index = _compile(node.target), _compile(node.index)
        return lambda env: _index(target(env), index(env), pos)
    if isinstance(node, nodes.Slice):
        target, start, end = _compile(node.target), _compile(node.start), _compile(node.end)
        return lambda env: _slice(target(env), start(env), end(env), pos)
    if isinstance(node, nodes.Predicate):
        return _compile_predicate(node)
    if isinstance(node, nodes.Contains):
        return _compile_contains(node)
    if isinstance(node, nodes.Count):
        target = _compile(node.target)
        return lambda env: len(_expect(target(env), "list", pos, "count() target"))
    if isinstance(node, nodes.CronSpanCall):
        return _compile_cron(node)
    if isinstance(node, nodes.Compare):
        left, right, op = _compile(node.left), _compile(node.right), node.op
        return lambda env: _compare(op, left(env), right(env), pos)
    if isinstance(node, nodes.Member):
        return _compile_member(node)
    if isinstance(node, (nodes.And, nodes.Or)):
        return _compile_logic(node)
    operand = _compile(node.operand)
    return lambda env: not _expect(operand(env), "bool", pos, "operand of !")


class CompiledExpression:
    """An expression ready to evaluate many times."""

    __slots__ = ("_run", "expression")

    def __init__(self, expression: Expression) -> None:
        self.expression = expression
        self._run = _compile(expression.root)

    def __call__(self, variables: Env) -> bool:
        """Evaluate to a bool; raises :class:`PolicyEvaluationFailed` and nothing else."""
        try:
            result = self._run(variables)
        except PolicyEvaluationFailed:
            raise
        except Exception as ex:  # the contract: evaluation never crashes its caller
            raise PolicyEvaluationFailed(f"evaluation failed ({type(ex).__name__})") from ex
        if _kind(result) != "bool":
            raise PolicyEvaluationFailed(
                f"expression evaluates to a {_kind(result)}, not a bool", self.expression.root.pos
            )
        return bool(result)


def compile_expression(expression: Expression) -> CompiledExpression:
    """Compile a parsed expression once for repeated evaluation."""
    return CompiledExpression(expression)


@lru_cache(maxsize=4096)
def compiled(text: str, field_name: str) -> CompiledExpression:
    """Parse and compile a stored expression once per process (raises on bad syntax)."""
    return CompiledExpression(parse(text, field=field_name))


def evaluate(expression: Expression, variables: Env) -> bool:
    """Evaluate ``expression`` against ``variables`` (a one-off; prefer compiling)."""
    return CompiledExpression(expression)(variables)


__all__: Sequence[str] = (
    "CompiledExpression",
    "PolicyEvaluationFailed",
    "compile_expression",
    "compiled",
    "evaluate",
)
