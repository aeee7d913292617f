"""The foreach variable by its bare name: inside ``foreach r in ...``, ``r.email`` reads ``$.r.email``.

The original runtime's programs write the variable so. The compiler rewrites
each such reference into the ``$.r`` form before checking it, so the compiled
program, and the workflow interpreting it, only ever see parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..program.model import ArrayLit, Attr, Binary, Index, Loc, MapLit, ParamRef, StepRef, Unary
from .scope import Scope

Report = Callable[[Loc | None, str], None]


def _line(loc: Loc | None) -> str:
    return f"line {loc.line}" if loc is not None else "an enclosing block"


def bind_loop_vars(expr: Any, scope: Scope, report: Report) -> Any:
    """``expr`` with every bare foreach variable as ``$.name``; inner nodes are rewritten in place.

    A step of the same name in scope makes the bare name ambiguous: that is
    reported once (and the name still read as the variable, so no second
    error follows from it).
    """
    if not scope.loop_vars or expr is None:
        return expr
    if isinstance(expr, StepRef):
        if expr.step not in scope.loop_vars:
            return expr
        step = scope.find_any(expr.step)
        if step is not None:
            report(expr.loc, f"'{expr.step}' names both the foreach variable of {_line(scope.loop_vars[expr.step])} "
                             f"and step '{step.name}' ({_line(step.loc)}): write '$.{expr.step}' for the variable "
                             "or rename the step")  # fmt: skip
        return ParamRef(name=expr.step, loc=expr.loc)
    if isinstance(expr, Attr):
        expr.target = bind_loop_vars(expr.target, scope, report)
    elif isinstance(expr, Index):
        expr.target = bind_loop_vars(expr.target, scope, report)
        expr.index = bind_loop_vars(expr.index, scope, report)
    elif isinstance(expr, ArrayLit):
        expr.items = [bind_loop_vars(item, scope, report) for item in expr.items]
    elif isinstance(expr, MapLit):
        for entry in expr.entries:
            entry.value = bind_loop_vars(entry.value, scope, report)
    elif isinstance(expr, Unary):
        expr.operand = bind_loop_vars(expr.operand, scope, report)
    elif isinstance(expr, Binary):
        expr.left = bind_loop_vars(expr.left, scope, report)
        expr.right = bind_loop_vars(expr.right, scope, report)
    return expr
