"""Checks at the boundaries where values enter a run: workflow inputs, handler results, CLI input and output.

Pure functions shared by the workflow, the handler dispatch and the command
line, so each boundary refuses the same things with the same words:

- JSON nested deeper than ``MAX_JSON_DEPTH`` levels: Python's JSON codec
  recurses, so such a value would end in a RecursionError wherever it is next
  encoded or decoded (a workflow task failing forever, a traceback);
- non-finite numbers (NaN, Infinity): JSON has no such values, and the
  Temporal CLI and Web UI cannot read a result that holds one;
- integers of more digits than Python converts to text (its
  ``sys.get_int_max_str_digits()``, 4,300 by default): they cannot be encoded;
- values that do not fit the declared FFL type (``check_type``).

``scan_json`` works on encoded JSON text, at C speed (regex and
``bytes.translate``), so a payload is checked before it is decoded and a
2 MB handler result costs milliseconds; ``check_type`` walks decoded values
of declared types only (a ``Json`` value is not walked).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from typing import Any

from .model import FacetDecl, Param, Program, SchemaDecl, TypeRef

MAX_JSON_DEPTH = 200
"""Most levels of nested lists and maps a value may have at a run's boundaries."""

MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
"""Most decimal digits of an integer: Python refuses to convert longer ones to text (JSON)."""

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_PAIR = re.compile(rb"\[\]|\{\}")
_NON_FINITE = re.compile(rb"NaN|Infinity")
_INT_LIMIT = 10**MAX_INT_DIGITS
_DIGITS = re.compile(rb"\d{%d,}" % (MAX_INT_DIGITS + 1))


class ValueProblem(ValueError):
    """A value refused at a boundary; the message says what and where."""


# --------------------------------------------------------------------------- JSON text


def _depth_exceeds(brackets: bytes, limit: int) -> bool:
    """Whether ``brackets`` (only ``[]{}``) nest deeper than ``limit``: each pass removes the innermost pairs."""
    if len(brackets) <= 2 * limit:
        return False
    for _ in range(limit):
        if not brackets:
            return False
        shorter = _PAIR.sub(b"", brackets)  # one pass: exactly one level less
        if len(shorter) == len(brackets):
            return False  # unbalanced text: the decoder will say so
        brackets = shorter
    return bool(brackets)


def scan_json(data: bytes | str, *, limit: int = MAX_JSON_DEPTH) -> str | None:
    """What makes JSON text unacceptable (too deep, NaN/Infinity, too many digits), or None."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    bare = _STRING.sub(b'""', raw)
    if _NON_FINITE.search(bare):
        return "holds a non-finite number (NaN or Infinity), which JSON cannot represent"
    if _DIGITS.search(bare):
        return f"holds an integer of more than {MAX_INT_DIGITS} digits"
    if _depth_exceeds(bare.translate(None, _NOT_BRACKETS), limit):
        return f"is nested more than {limit} levels deep"
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueProblem(f"{name} is not a JSON number")


def loads_bounded(text: str, *, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` that refuses what ``scan_json`` refuses, and floats that overflow (``1e400``)."""
    problem = scan_json(text, limit=limit)
    if problem is not None:
        raise ValueProblem(f"the JSON {problem}")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as err:  # unreachable after the scan; kept so no traceback can escape
        raise ValueProblem(f"the JSON is nested more than {limit} levels deep") from err
    problem = check_value(value, limit=limit)  # 1e400 parses as an infinite float
    if problem is not None:
        raise ValueProblem(f"the JSON {problem}")
    return value


def dumps_checked(value: Any, **options: Any) -> str:
    """``json.dumps`` for output: no NaN/Infinity, no nesting past the limit, no over-long integer."""
    problem = check_value(value)
    if problem is not None:
        raise ValueProblem(f"the value {problem}")
    return json.dumps(value, allow_nan=False, **options)


# --------------------------------------------------------------------------- decoded values


def check_value(value: Any, *, limit: int = MAX_JSON_DEPTH) -> str | None:
    """Like ``scan_json`` for a decoded value: nesting, non-finite floats, over-long integers."""
    stack: list[tuple[Any, str, int]] = [(value, "$", 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"holds a non-finite number ({item}) at {where}, which JSON cannot represent"
        elif isinstance(item, int) and not isinstance(item, bool):
            if too_many_digits(item):
                return f"holds an integer of more than {MAX_INT_DIGITS} digits at {where}"
        elif isinstance(item, (dict, list, tuple)):
            if depth >= limit:
                return f"is nested more than {limit} levels deep (at {where})"
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            fmt = "{}.{}" if isinstance(item, dict) else "{}[{}]"
            stack.extend((v, fmt.format(where, k), depth + 1) for k, v in pairs)
    return None


def too_many_digits(number: int) -> bool:
    """Whether ``number`` has more digits than Python converts to text."""
    return number >= _INT_LIMIT or -number >= _INT_LIMIT


# --------------------------------------------------------------------------- FFL types


def type_text(ref: TypeRef) -> str:
    """A type as written: ``Long``, ``[String]``, ``ns.Address``."""
    return "[" * ref.depth + ref.name + "]" * ref.depth


def describe(value: Any) -> str:
    """A received value's kind (and short form, for scalars), for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"integer {value}" if -10**18 < value < 10**18 else "integer"
    if isinstance(value, float):
        return f"double {value!r}"
    if isinstance(value, str):
        return f"string {json.dumps(value[:40] + ('…' if len(value) > 40 else ''), ensure_ascii=False)}"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "record"
    return type(value).__name__


def _scalar_problem(name: str, value: Any, integral_doubles: bool = True) -> bool:
    """Whether ``value`` (not null) does not fit builtin type ``name``.

    JSON has one number type, so a double with no fraction (``331750.0``) fits Long and Int
    (``integral_doubles``; runs started before 0.2.0.dev3 refused it).
    """
    if name == "Json":
        return False
    if name in ("Long", "Int"):
        if integral_doubles and isinstance(value, float) and value.is_integer():
            return False
        return not isinstance(value, int) or isinstance(value, bool)
    if name == "Double":
        return not isinstance(value, (int, float)) or isinstance(value, bool)
    if name == "String":
        return not isinstance(value, str)
    if name == "Boolean":
        return not isinstance(value, bool)
    return False


def check_type(value: Any, ref: TypeRef, schemas: Mapping[str, SchemaDecl], where: str,
               integral_doubles: bool = True) -> str | None:
    """Why ``value`` does not fit ``ref`` (naming ``where``, expected and received), or None if it fits.

    Null fits every type (an absent value, as FFL reads it). Long and Int take
    integers (and doubles without a fraction; ``1.5`` and ``true`` do not fit); Double takes any number;
    a schema takes a record whose fields fit theirs and that has no other
    field; ``Json`` takes anything. Unknown type names are not checked.
    """
    stack: list[tuple[Any, str, int, str]] = [(value, ref.name, ref.depth, where)]
    while stack:
        item, name, depth, place = stack.pop()
        if item is None:
            continue
        expected = "[" * depth + name + "]" * depth
        if depth:
            if not isinstance(item, (list, tuple)):
                return f"{place} expects {expected}, got {describe(item)}"
            stack.extend((v, name, depth - 1, f"{place}[{i}]") for i, v in reversed(list(enumerate(item))))
            continue
        schema = schemas.get(name)
        if schema is not None:
            if not isinstance(item, dict):
                return f"{place} expects {name}, got {describe(item)}"
            fields = {f.name: f for f in schema.fields}
            extra = [k for k in item if k not in fields]
            if extra:
                return f"{place} expects {name}, which has no field '{extra[0]}'"
            stack.extend((item[f.name], f.type.name, f.type.depth, f"{place}.{f.name}")
                         for f in reversed(schema.fields) if f.name in item)
            continue
        if isinstance(item, float) and not math.isfinite(item):
            return f"{place} is a non-finite number ({item}), which JSON cannot represent"
        if name == "Json":
            problem = check_value(item)  # anything goes, as long as it is JSON
            if problem is not None:
                return f"{place} {problem}"
            continue
        if _scalar_problem(name, item, integral_doubles):
            return f"{place} expects {expected}, got {describe(item)}"
    return None


def _mixed_params(program: Program, decl: FacetDecl, returns: bool) -> list[Param]:
    """The declaration's parameters (or returns), then those its signature mixins (without ``as``) add."""
    params = list(decl.returns if returns else decl.params)
    for mixin in decl.mixins:
        mixed = program.facets.get(mixin.facet or "")
        if mixed is not None and (returns or not mixin.alias):
            params.extend(mixed.returns if returns else mixed.params)
    return params


def input_problems(program: Program, decl: FacetDecl, params: Mapping[str, Any],
                   integral_doubles: bool = True) -> list[str]:
    """Every workflow parameter whose value does not fit its declared type, each naming it."""
    problems = []
    for param in _mixed_params(program, decl, returns=False):
        if param.name in params:
            problem = check_type(params[param.name], param.type, program.schemas, f"parameter '{param.name}'",
                                 integral_doubles)
            if problem is not None:
                problems.append(problem)
    return problems


def return_problem(program: Program, decl: FacetDecl, returns: Mapping[str, Any], integral_doubles: bool = True,
                   whose: str = "handler result") -> str | None:
    """The first declared return set to a value of the wrong type (by a handler, or a workflow's yields), or None.

    Undeclared keys are not checked: handlers may return more than the facet declares.
    """
    for param in _mixed_params(program, decl, returns=True):
        if param.name in returns:
            problem = check_type(returns[param.name], param.type, program.schemas, f"return '{param.name}'",
                                 integral_doubles)
            if problem is not None:
                return f"{whose} does not fit the declared returns: {problem}"
    return None
