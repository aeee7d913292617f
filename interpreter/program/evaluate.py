"""The expression evaluator: pure, deterministic, shared by the workflow and tests.

``evaluate(expr, params, steps)`` computes one model ``Expr``. Parameters
come from a mapping; step returns come through a callback so the caller
decides what a step name means in its scope. Every failure is an
``EvaluationError`` whose message says what could not be read or computed:
arithmetic overflow, integers past Python's digit limit and any other error
Python raises while evaluating become one, so a bad value fails its step (and
``catch`` sees it) instead of the interpreter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .exprtext import expr_text
from .model import ArrayLit, Attr, Binary, Index, Lit, MapLit, ParamRef, StepRef, Unary
from .values import MAX_INT_DIGITS, too_many_digits


class EvaluationError(Exception):
    """An expression could not be evaluated; the message names what failed."""


@dataclass(frozen=True)
class StepValue:
    """What an expression sees of a completed step.

    ``declared`` lists the returns the step's facet declares, so reading one
    that was never set is told apart from reading one that does not exist.
    """

    name: str
    returns: Mapping[str, Any]
    declared: Collection[str] = field(default_factory=tuple)


_MISSING = object()


def evaluate(expr: Any, params: Mapping[str, Any], steps: Callable[[str], StepValue]) -> Any:
    """Value of ``expr`` with ``$.x`` read from ``params`` and ``s.f`` from ``steps(s)``."""
    try:
        return _Evaluator(params, steps).eval(expr)
    except EvaluationError:
        raise
    except RecursionError as err:
        raise EvaluationError(f"'{_text(expr)}' is nested too deeply to evaluate") from err
    except Exception as err:  # noqa: BLE001 - every evaluation error is a step failure, never the interpreter's
        raise EvaluationError(f"'{_text(expr)}' failed: {type(err).__name__}: {err}") from err


def _text(expr: Any) -> str:
    try:
        text = expr_text(expr)
    except Exception:  # noqa: BLE001 - only for a message
        return type(expr).__name__
    return text if len(text) <= 80 else text[:77] + "..."


def to_text(value: Any) -> str:
    """How ``++`` shows a value: strings as is, null as nothing, the rest as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=False)


def describe(value: Any) -> str:
    """Type name of a runtime value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "double"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def values_equal(a: Any, b: Any) -> bool:
    """Structural equality where booleans never equal numbers (``true != 1``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


class _Evaluator:
    def __init__(self, params: Mapping[str, Any], steps: Callable[[str], StepValue]):
        self.params = params
        self.steps = steps

    def eval(self, expr: Any) -> Any:
        method = getattr(self, "_" + type(expr).__name__.lower(), None)
        if method is None:
            raise EvaluationError(f"cannot evaluate {type(expr).__name__}")
        return method(expr)

    # ------------------------------------------------------------------ atoms

    def _lit(self, expr: Lit) -> Any:
        return expr.value

    def _paramref(self, expr: ParamRef) -> Any:
        value = self.params.get(expr.name, _MISSING)
        if value is _MISSING:
            raise EvaluationError(f"parameter '$.{expr.name}' is not set")
        return value

    def _stepref(self, expr: StepRef) -> Any:
        return dict(self._step(expr.step).returns)

    def _step(self, name: str) -> StepValue:
        try:
            return self.steps(name)
        except EvaluationError:
            raise
        except LookupError as err:
            raise EvaluationError(f"step '{name}' is not available") from err

    def _arraylit(self, expr: ArrayLit) -> list:
        return [self.eval(item) for item in expr.items]

    def _maplit(self, expr: MapLit) -> dict:
        return {entry.key: self.eval(entry.value) for entry in expr.entries}

    # ------------------------------------------------------------------ access

    def _attr(self, expr: Attr) -> Any:
        if isinstance(expr.target, StepRef):
            step = self._step(expr.target.step)
            value = step.returns.get(expr.name, _MISSING)
            if value is not _MISSING:
                return value
            if expr.name in step.declared:
                raise EvaluationError(f"step '{step.name}' never set its return '{expr.name}'")
            raise EvaluationError(f"step '{step.name}' has no return '{expr.name}'")
        target = self.eval(expr.target)
        where = expr_text(expr.target)
        if isinstance(target, dict):
            value = target.get(expr.name, _MISSING)
            if value is _MISSING:
                raise EvaluationError(f"'{where}' has no field '{expr.name}'")
            return value
        raise EvaluationError(f"cannot read field '{expr.name}' of {describe(target)} '{where}'")

    def _index(self, expr: Index) -> Any:
        target = self.eval(expr.target)
        index = self.eval(expr.index)
        where = expr_text(expr.target)
        if isinstance(target, (list, str)):
            if not isinstance(index, int) or isinstance(index, bool):
                raise EvaluationError(f"index of '{where}' must be an integer, not {describe(index)}")
            if not -len(target) <= index < len(target):
                raise EvaluationError(f"index {index} out of range for '{where}' of length {len(target)}")
            return target[index]
        if isinstance(target, dict):
            if not isinstance(index, str):
                raise EvaluationError(f"key of map '{where}' must be a string, not {describe(index)}")
            value = target.get(index, _MISSING)
            if value is _MISSING:
                raise EvaluationError(f"'{where}' has no key {json.dumps(index)}")
            return value
        raise EvaluationError(f"cannot index {describe(target)} '{where}'")

    # ------------------------------------------------------------------ operators

    def _unary(self, expr: Unary) -> Any:
        value = self.eval(expr.operand)
        if expr.op == "!":
            if not isinstance(value, bool):
                raise EvaluationError(f"'!' needs a boolean, got {describe(value)}")
            return not value
        if not _is_number(value):
            raise EvaluationError(f"unary '-' needs a number, got {describe(value)}")
        return -value

    def _binary(self, expr: Binary) -> Any:
        op = expr.op
        if op in ("&&", "||"):
            return self._logic(expr)
        left = self.eval(expr.left)
        right = self.eval(expr.right)
        if op == "++":
            return to_text(left) + to_text(right)
        if op == "==":
            return values_equal(left, right)
        if op == "!=":
            return not values_equal(left, right)
        if op in ("<", "<=", ">", ">="):
            return _compare(op, left, right)
        if op in ("+", "-", "*", "/", "%"):
            return _arith(op, left, right)
        raise EvaluationError(f"unknown operator '{op}'")

    def _logic(self, expr: Binary) -> bool:
        left = self.eval(expr.left)
        if not isinstance(left, bool):
            raise EvaluationError(f"'{expr.op}' needs booleans, got {describe(left)} on the left")
        if (expr.op == "&&" and not left) or (expr.op == "||" and left):
            return left
        right = self.eval(expr.right)
        if not isinstance(right, bool):
            raise EvaluationError(f"'{expr.op}' needs booleans, got {describe(right)} on the right")
        return right


def _compare(op: str, left: Any, right: Any) -> bool:
    comparable = (_is_number(left) and _is_number(right)) or (
        isinstance(left, str) and isinstance(right, str)
    )
    if not comparable:
        raise EvaluationError(f"cannot compare {describe(left)} {op} {describe(right)}")
    if op == "<":
        return left < right
    if op == "<=":
        return left <= right
    if op == ">":
        return left > right
    return left >= right


def _arith(op: str, left: Any, right: Any) -> Any:
    if op == "+":
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        if isinstance(left, list) and isinstance(right, list):
            return left + right
    if not (_is_number(left) and _is_number(right)):
        raise EvaluationError(f"'{op}' needs numbers, got {describe(left)} and {describe(right)}")
    try:
        result = _numeric(op, left, right)
    except OverflowError as err:  # an integer too large for a float: 10**400 / 3, 10**400 * 1.5
        raise EvaluationError(f"'{op}' overflowed: {err}") from err
    if isinstance(result, float) and not math.isfinite(result):
        raise EvaluationError(f"'{op}' overflowed")
    if isinstance(result, int) and too_many_digits(result):
        raise EvaluationError(f"'{op}' gives an integer of more than {MAX_INT_DIGITS} digits")
    return result


def _numeric(op: str, left: Any, right: Any) -> Any:
    if op == "+":
        result = left + right
    elif op == "-":
        result = left - right
    elif op == "*":
        result = left * right
    elif op == "/":
        if right == 0:
            raise EvaluationError("division by zero")
        result = left / right
    else:
        if right == 0:
            raise EvaluationError("modulo by zero")
        result = left % right
    return result
