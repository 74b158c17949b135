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
policy many times costs no tree walking. The closures take a fast path for the common exact
types (``str``, ``int``, ``bool``, ``dict``) and fall back to the general checks below for
anything else, so both paths give the same results and the same errors.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from infra.errors import WalletError
from infra.policy import nodes
from infra.policy.nodes import Expression, Node, Position
from infra.policy.parser import parse
from infra.policy.text import check_policy_text

Env = Mapping[str, Any]
Compiled = Callable[[Env], Any]


class PolicyEvaluationFailed(WalletError):
    """An expression could not be evaluated; the policy's outcome is ``OUTCOME_ERROR``."""

    code = "policy_evaluation_failed"

    def __init__(self, message: str, pos: Position | None = None) -> None:
        super().__init__(f"{message} at {pos}" if pos else message)
        self.pos = pos


# Exact type -> kind, for the common values (subclasses take the isinstance path below).
_KINDS: dict[type, str] = {
    type(None): "missing", bool: "bool", int: "int", str: "string", datetime: "timestamp",
    dict: "struct", list: "list", tuple: "list",
}  # fmt: skip
# Exact types whose comparison needs no kind checks: same type on both sides ⇒ same kind.
_PLAIN = frozenset({str, int, bool})
_ORDERED = frozenset({int, datetime})


def _kind(value: Any) -> str:
    kind = _KINDS.get(type(value))
    if kind is not None:
        return kind
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


def _expect_bool(value: Any, pos: Position, what: str) -> bool:
    """``_expect(value, "bool", …)`` without a kind look-up when it is one."""
    if value is True or value is False:
        return value
    return bool(_expect(value, "bool", pos, what))


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
    if type(value) is dict:
        found = value.get(name)
        if found is not None:
            return found
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

    of_target, of_predicate = f"{function}() target", f"{function}() predicate"

    def results(env: Env) -> tuple[Any, list[bool]]:
        items = target(env)
        if type(items) is not list:
            items = _expect(items, "list", pos, of_target)
        scope = dict(env)
        found = []
        # Every item runs (no short circuit), so an error on any item is an error.
        for value in items:
            scope[item] = value
            result = body(scope)
            if result is not True and result is not False:
                result = _expect_bool(result, pos, of_predicate)
            found.append(result)
        return items, found

    if function == "all":
        return lambda env: all(results(env)[1])
    if function == "any":
        return lambda env: any(results(env)[1])

    def kept(env: Env) -> list[Any]:
        items, found = results(env)
        return [v for v, keep in zip(items, found, strict=True) if keep]

    return kept


def _contains_equal(items: Sequence[Any], value: Any) -> bool:
    """``any(_equal(v, value) for v in items)``, comparing same-typed plain values directly."""
    kind = type(value)
    if kind not in _PLAIN:
        return any(_equal(v, value) for v in items)
    for v in items:
        if type(v) is kind:
            if v == value:
                return True
        elif _equal(v, value):
            return True
    return False


def _compile_count(node: nodes.Count) -> Compiled:
    target, pos = _compile(node.target), node.pos

    def run(env: Env) -> int:
        items = target(env)
        if type(items) is not list:
            items = _expect(items, "list", pos, "count() target")
        return len(items)

    return run


def _compile_contains(node: nodes.Contains) -> Compiled:
    target, needle, pos = _compile(node.target), _compile(node.value), node.pos

    def run(env: Env) -> bool:
        haystack, value = target(env), needle(env)
        if type(haystack) is not list:
            if _kind(haystack) == "string":
                return _expect(value, "string", pos, "contains() value") in haystack
            _expect(haystack, "list", pos, "contains() target")
        return _contains_equal(haystack, value)

    return run


def _compile_member(node: nodes.Member) -> Compiled:
    left, right, pos = _compile(node.left), _compile(node.right), node.pos

    def run(env: Env) -> bool:
        value, items = left(env), right(env)
        if value is None:
            raise PolicyEvaluationFailed("MissingField: left side of 'in'", pos)
        if type(items) is not list:
            items = _expect(items, "list", pos, "right side of 'in'")
        return _contains_equal(items, value)

    return run


def _compile_logic(node: nodes.And | nodes.Or) -> Compiled:
    left, right, pos = _compile(node.left), _compile(node.right), node.pos
    conjunction = isinstance(node, nodes.And)
    name = "&&" if conjunction else "||"

    # No short circuit: both sides always run, so an error anywhere is an error.
    def both(env: Env) -> bool:
        a = left(env)
        if a is not True and a is not False:
            a = _expect_bool(a, pos, f"left side of {name}")
        b = right(env)
        if b is not True and b is not False:
            b = _expect_bool(b, pos, f"right side of {name}")
        return a and b

    def either(env: Env) -> bool:
        a = left(env)
        if a is not True and a is not False:
            a = _expect_bool(a, pos, f"left side of {name}")
        b = right(env)
        if b is not True and b is not False:
            b = _expect_bool(b, pos, f"right side of {name}")
        return a or b

    return both if conjunction else either


def _compile_compare(node: nodes.Compare) -> Compiled:
    left, right, op, pos = _compile(node.left), _compile(node.right), node.op, node.pos
    if op in ("==", "!="):
        equal = op == "=="
        if isinstance(node.right, nodes.Literal) and type(node.right.value) in _PLAIN:
            constant = node.right.value
            constant_type = type(constant)

            def against_constant(env: Env) -> bool:
                a = left(env)
                if type(a) is constant_type:
                    return (a == constant) is equal
                return _compare(op, a, constant, pos)

            return against_constant

        def equality(env: Env) -> bool:
            a, b = left(env), right(env)
            kind = type(a)
            if kind is type(b) and kind in _PLAIN:
                return (a == b) is equal
            return _compare(op, a, b, pos)

        return equality
    order = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge}[op]
    if isinstance(node.right, nodes.Literal) and type(node.right.value) in _ORDERED:
        bound = node.right.value
        bound_type = type(bound)

        def against_bound(env: Env) -> bool:
            a = left(env)
            if type(a) is bound_type:
                return bool(order(a, bound))
            return _compare(op, a, bound, pos)

        return against_bound

    def ordering(env: Env) -> bool:
        a, b = left(env), right(env)
        kind = type(a)
        if kind is type(b) and kind in _ORDERED:
            return bool(order(a, b))
        return _compare(op, a, b, pos)

    return ordering


def _compile_name(node: nodes.Name) -> Compiled:
    name, pos = node.name, node.pos

    def run(env: Env) -> Any:
        value = env.get(name)
        if value is None:
            raise PolicyEvaluationFailed(f"MissingField: {name!r}", pos)
        return value

    return run


def _compile_field(node: nodes.Field) -> Compiled:
    """``a.b.c``: one closure walking the whole path when it starts at a name."""
    steps: list[tuple[str, Position]] = []
    root: Node = node
    while isinstance(root, nodes.Field):
        steps.append((root.name, root.pos))
        root = root.target
    if not isinstance(root, nodes.Name):
        target, name, pos = _compile(node.target), node.name, node.pos
        return lambda env: _field(target(env), name, pos)
    path = tuple(reversed(steps))
    keyword, start = root.name, root.pos

    def run(env: Env) -> Any:
        value = env.get(keyword)
        if value is None:
            raise PolicyEvaluationFailed(f"MissingField: {keyword!r}", start)
        for name, pos in path:
            if type(value) is dict:
                found = value.get(name)
                if found is not None:
                    value = found
                    continue
            value = _field(value, name, pos)
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
        return _compile_field(node)
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
        return _compile_count(node)
    if isinstance(node, nodes.CronSpanCall):
        return _compile_cron(node)
    if isinstance(node, nodes.Compare):
        return _compile_compare(node)
    if isinstance(node, nodes.Member):
        return _compile_member(node)
    if isinstance(node, (nodes.And, nodes.Or)):
        return _compile_logic(node)
    operand = _compile(node.operand)
    return lambda env: not _expect(operand(env), "bool", pos, "operand of !")


class CompiledExpression:
    """An expression ready to evaluate many times.

    Calling it (or its :attr:`evaluate`, the same plain function, a little cheaper to call in
    a loop) evaluates to a bool and raises :class:`PolicyEvaluationFailed` and nothing else.
    """

    __slots__ = ("evaluate", "expression")

    def __init__(self, expression: Expression) -> None:
        self.expression = expression
        self.evaluate = _checked(_compile(expression.root), expression.root.pos)

    def __call__(self, variables: Env) -> bool:
        """Evaluate to a bool; raises :class:`PolicyEvaluationFailed` and nothing else."""
        return self.evaluate(variables)


def _checked(run: Compiled, pos: Position) -> Callable[[Env], bool]:
    def evaluate(variables: Env) -> bool:
        try:
            result = run(variables)
        except PolicyEvaluationFailed:
            raise
        except Exception as ex:  # the contract: evaluation never crashes its caller
            raise PolicyEvaluationFailed(f"evaluation failed ({type(ex).__name__})") from ex
        if result is True or result is False:
            return result
        if _kind(result) != "bool":
            raise PolicyEvaluationFailed(
                f"expression evaluates to a {_kind(result)}, not a bool", pos
            )
        return bool(result)

    return evaluate


def compile_expression(expression: Expression) -> CompiledExpression:
    """Compile a parsed expression once for repeated evaluation."""
    return CompiledExpression(expression)


#: A field path with this prefix names text a request proposes (``parameters.scope``…).
PROPOSED = "parameters."


@lru_cache(maxsize=4096)
def compiled(text: str, field_name: str) -> CompiledExpression:
    """Parse and compile an expression once per process (raises on bad syntax).

    Checks of new text (an MFA policy's condition, a session profile's scope) name the
    request field (``parameters.condition``): such text must also be readable
    (``infra.policy.text``: no invisible characters, no mixed-script words). Stored text is
    compiled under its column name (``condition``, ``scope``) and is not re-judged.
    """
    if field_name.startswith(PROPOSED):
        check_policy_text(text, field=field_name)
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
