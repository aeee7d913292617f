"""Expression checking: references, fields and operator types, collecting what is read.

Types are inferred only from literals and declared parameter/return/field
types; anything unknown (Json, foreach variables, script keys, maps) is
never an error.
"""

from __future__ import annotations

from collections.abc import Callable

from ..program.model import (
    BUILTIN_TYPES,
    ArrayLit,
    Attr,
    Binary,
    Block,
    Index,
    Lit,
    Loc,
    MapLit,
    ParamRef,
    Step,
    StepRef,
    Unary,
)
from .fields import BOOLEAN, DOUBLE, JSON, LONG, STRING, Ty, schema_fields, step_fields
from .loop_vars import bind_loop_vars
from .scope import Reads, Scope
from .suggest import did_you_mean
from .symbols import SymbolTable

Report = Callable[[Loc | None, str], None]
Reached = tuple[Step, Block, Step]
"""A step read from outside the ``andThen`` it is declared in: (the visible step carrying it, its block, it)."""

_NUMERIC = {"Long", "Int", "Double"}
_ORDERED = {"<", "<=", ">", ">="}
_ARITHMETIC = {"+", "-", "*", "/", "%"}


def _is_schema(t: Ty) -> bool:
    return t is not None and t[1] == 0 and t[0] not in BUILTIN_TYPES


def _unprefixed(name: str) -> str:
    return name.removeprefix("$.")


def _near_step(name: str, scope: Scope) -> str:
    """Suggest a visible step, foreach variable (by its bare name) or ``$.`` parameter for ``name``."""
    params = [f"$.{p}" for p in scope.params or () if p not in scope.loop_vars]
    return did_you_mean(name, [*scope.visible_steps(), *scope.loop_vars, *params], key=_unprefixed)


def _near_param(name: str, scope: Scope) -> str:
    return did_you_mean(name, [f"$.{p}" for p in scope.params or ()], key=_unprefixed)


def _inner(carrier: Step, name: str) -> list[tuple[Block, Step]]:
    """Steps called ``name`` inside ``carrier``'s andThen steps blocks, at any depth of such blocks: the ones
    that ran exactly once when ``carrier`` completed (not in a foreach, a when case or a catch)."""
    found: list[tuple[Block, Step]] = []
    for block in carrier.blocks:
        if block.kind != "steps":
            continue
        for step in block.steps:
            if step.name == name:
                found.append((block, step))
            found.extend(_inner(step, name))
    return found


def reached(name: str, scope: Scope) -> list[Reached]:
    """Where ``name`` is declared inside the andThen of a step visible here (not one this scope is inside)."""
    return [(carrier, block, step) for carrier in scope.visible() if carrier.id not in scope.enclosing
            for block, step in _inner(carrier, name)]


def show_type(t: Ty) -> str:
    assert t is not None
    return "[" * t[1] + t[0] + "]" * t[1]


def _lit_type(value) -> Ty:
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return LONG
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, str):
        return STRING
    return None


class ExprChecker:
    def __init__(self, table: SymbolTable, report: Report, decl_steps: set[str]):
        self.table = table
        self._report = report
        self.decl_steps = decl_steps
        self.where: Loc | None = None

    def report(self, loc: Loc | None, message: str) -> None:
        self._report(loc or self.where, message)

    def check_field(self, holder, name: str, scope: Scope, reads: Reads, at: Loc | None = None) -> Ty:
        """Check the expression ``holder.<name>``, first rewriting bare foreach variables in it."""
        expr = bind_loop_vars(getattr(holder, name), scope, lambda loc, message: self.report(loc or at, message))
        setattr(holder, name, expr)
        return self.check(expr, scope, reads, at)

    def check(self, expr, scope: Scope, reads: Reads, at: Loc | None = None) -> Ty:
        """Report every problem in ``expr``, record its reads, return its static type.

        ``at`` (e.g. the argument's place) locates problems in nodes without a loc.
        """
        outer = self.where
        self.where = getattr(expr, "loc", None) or at or outer
        try:
            return self._check(expr, scope, reads)
        finally:
            self.where = outer

    def _check(self, expr, scope: Scope, reads: Reads) -> Ty:
        if isinstance(expr, Lit):
            return _lit_type(expr.value)
        if isinstance(expr, ParamRef):
            return self._param(expr, scope, reads)
        if isinstance(expr, StepRef):
            step = self.step(expr.step, expr.loc, scope, reads)
            if step is not None and step.call.kind == "schema":
                return (step.call.facet or "", 0)
            return None
        if isinstance(expr, Attr):
            return self._attr(expr, scope, reads)
        if isinstance(expr, Index):
            target = self.check(expr.target, scope, reads)
            self.check(expr.index, scope, reads)
            return (target[0], target[1] - 1) if target is not None and target[1] > 0 else None
        if isinstance(expr, ArrayLit):
            for item in expr.items:
                self.check(item, scope, reads)
            return None
        if isinstance(expr, MapLit):
            for entry in expr.entries:
                self.check(entry.value, scope, reads)
            return JSON
        if isinstance(expr, Unary):
            return self._unary(expr, scope, reads)
        if isinstance(expr, Binary):
            return self._binary(expr, scope, reads)
        return None

    def step(self, name: str, loc: Loc | None, scope: Scope, reads: Reads) -> Step | None:
        """Resolve a step reference in ``scope``, explaining why it is not visible."""
        if name == scope.current:
            self.report(loc, f"step '{name}' cannot reference itself outside its own andThen and catch")
            return None
        seen = scope.lookup(name)
        if seen is not None:
            reads.ref(name)
            if seen.sink is not None:
                seen.sink.add(seen.index)
            return seen.step
        if scope.is_later(name):
            self.report(loc, f"step '{name}' is referenced before it is defined")
        elif name in self.decl_steps:
            return self.reach(name, loc, scope, reads)
        elif scope.params and name in scope.params:
            self.report(loc, f"unknown step '{name}' (the parameter is written '$.{name}')")
        else:
            self.report(loc, f"unknown step '{name}'{_near_step(name, scope)}")
        return None

    def reach(self, name: str, loc: Loc | None, scope: Scope, reads: Reads) -> Step | None:
        """A step declared inside a visible step's andThen, read from outside it as the original runtime did:
        the reader waits for the carrying step (so for everything in its andThen), then reads the inner step."""
        found = reached(name, scope)
        if len(found) != 1:
            where = f" (in the andThen blocks of {', '.join(repr(c.name) for c, _, _ in found)})" if found else ""
            self.report(loc, f"step '{name}' is defined in another block and is not visible here{where}")
            return None
        carrier, block, step = found[0]
        self.step(carrier.name, loc, scope, reads)  # read first: the reader waits for it, then for the inner step
        reads.ref(name)
        if name not in carrier.reaches:
            carrier.reaches.append(name)
        if name not in block.exports:
            block.exports.append(name)
        return step

    def _param(self, expr: ParamRef, scope: Scope, reads: Reads) -> Ty:
        if scope.params is None:
            reads.param(expr.name)
            return None
        if expr.name not in scope.params:
            self.report(expr.loc, f"unknown parameter '$.{expr.name}'{_near_param(expr.name, scope)}")
            return None
        reads.param(expr.name)
        return scope.params[expr.name]

    def _attr(self, expr: Attr, scope: Scope, reads: Reads) -> Ty:
        loc = expr.loc or expr.target.loc
        if isinstance(expr.target, StepRef):
            step = self.step(expr.target.step, expr.target.loc or loc, scope, reads)
            if step is None:
                return None
            fields = step_fields(self.table, step)
            if fields is None:
                return None
            if expr.name not in fields:
                self.report(loc, f"unknown return '{expr.name}' of step '{step.name}' (facet '{step.call.facet}' has no "
                                 f"such return){did_you_mean(expr.name, fields)}")
                return None
            return fields[expr.name]
        target = self.check(expr.target, scope, reads)
        record = schema_fields(self.table, target)
        if record is None:
            return None
        qname, fields = record
        if expr.name not in fields:
            self.report(loc, f"unknown field '{expr.name}' of schema '{qname}'{did_you_mean(expr.name, fields)}")
            return None
        return fields[expr.name]

    def _unary(self, expr: Unary, scope: Scope, reads: Reads) -> Ty:
        operand = self.check(expr.operand, scope, reads)
        if expr.op == "!":
            if operand is not None and operand not in (BOOLEAN, JSON):
                self.report(expr.loc, f"operator '!' needs a Boolean operand, got {show_type(operand)}")
            return BOOLEAN
        if _is_schema(operand):
            self.report(expr.loc, f"arithmetic '-' on schema value of type '{show_type(operand)}'")
            return None
        if _known(operand) and not _is_number(operand):
            self.report(expr.loc, f"unary '-' needs a number, got {show_type(operand)}")
            return None
        return operand if _is_number(operand) else None

    def _binary(self, expr: Binary, scope: Scope, reads: Reads) -> Ty:
        left = self.check(expr.left, scope, reads)
        right = self.check(expr.right, scope, reads)
        op = expr.op
        if op in ("&&", "||"):
            for side in (left, right):
                if side is not None and side not in (BOOLEAN, JSON):
                    self.report(expr.loc, f"operator '{op}' needs Boolean operands, got {show_type(side)}")
            return BOOLEAN
        if op in _ORDERED:
            if BOOLEAN in (left, right):
                self.report(expr.loc, f"ordered comparison '{op}' of Boolean values")
            elif _known(left) and _known(right) and not _orderable(left, right):
                self.report(expr.loc, f"ordered comparison '{op}' of {show_type(left)} and {show_type(right)}: "
                                      "it needs two numbers or two strings")
            return BOOLEAN
        if op in ("==", "!="):
            return BOOLEAN
        if op == "++":
            return STRING
        if op in _ARITHMETIC:
            schemas = [side for side in (left, right) if _is_schema(side)]
            for side in schemas:
                self.report(expr.loc, f"arithmetic '{op}' on schema value of type '{show_type(side)}'")
            if not schemas and _known(left) and _known(right) and not _arith_ok(op, left, right):
                self.report(expr.loc, f"arithmetic '{op}' needs numbers, got {show_type(left)} and {show_type(right)}")
            return _arith_type(op, left, right)
        return None


def _known(t: Ty) -> bool:
    """A type precise enough to judge an operator by (Json and unknowns never are)."""
    return t is not None and t != JSON


def _is_number(t: Ty) -> bool:
    return t is not None and t[1] == 0 and t[0] in _NUMERIC


def _orderable(left: Ty, right: Ty) -> bool:
    return (_is_number(left) and _is_number(right)) or left == right == STRING


def _arith_ok(op: str, left: Ty, right: Ty) -> bool:
    """Numbers; ``+`` also joins two strings or two lists (as the evaluator does)."""
    if _is_number(left) and _is_number(right):
        return True
    assert left is not None and right is not None
    return op == "+" and (left == right == STRING or (left[1] > 0 and right[1] > 0))


def _arith_type(op: str, left: Ty, right: Ty) -> Ty:
    if left is None or right is None or left[1] or right[1]:
        return None
    if left[0] not in _NUMERIC or right[0] not in _NUMERIC:
        return None
    if op == "/" or DOUBLE in (left, right):
        return DOUBLE
    return LONG
