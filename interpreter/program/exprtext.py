"""Expressions back to FFL text, for labels and messages (not a formatter: no layout kept)."""

from __future__ import annotations

import json

from .model import ArrayLit, Attr, Binary, Index, Lit, MapLit, ParamRef, StepRef, Unary

_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
               "++": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}


def expr_text(expr, parent: int = 0) -> str:
    if isinstance(expr, Lit):
        return "null" if expr.value is None else json.dumps(expr.value, ensure_ascii=False)
    if isinstance(expr, ParamRef):
        return f"$.{expr.name}"
    if isinstance(expr, StepRef):
        return expr.step
    if isinstance(expr, Attr):
        return f"{expr_text(expr.target, 9)}.{expr.name}"
    if isinstance(expr, Index):
        return f"{expr_text(expr.target, 9)}[{expr_text(expr.index)}]"
    if isinstance(expr, ArrayLit):
        return "[" + ", ".join(expr_text(i) for i in expr.items) + "]"
    if isinstance(expr, MapLit):
        return "#{" + ", ".join(f"{json.dumps(e.key)}: {expr_text(e.value)}" for e in expr.entries) + "}"
    if isinstance(expr, Unary):
        return f"{expr.op}{expr_text(expr.operand, 8)}"
    if isinstance(expr, Binary):
        mine = _PRECEDENCE.get(expr.op, 0)
        text = f"{expr_text(expr.left, mine)} {expr.op} {expr_text(expr.right, mine + 1)}"
        return f"({text})" if mine < parent else text
    return "?"
