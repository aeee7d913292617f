"""Robustness: on any parseable mutation of valid programs, checking returns diagnostics, never raises."""

from __future__ import annotations

import re
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interpreter.compiler import CompileError, Diagnostic, check_sources, compile_sources
from tests.conformance_suite import valid_texts

EXTRA = """namespace m {
    uses m
    facet Mx(k: Long = 1) => (extra: Long)
    schema S { a: Long, b: [S] }
    implicit i = Mx(k = 2)
    event facet E(x: Long, s: S = null) => (y: Long, s: S) prompt { template "{x} {s.a}" }
    facet P(x: Long) => (y: Long) script "result['z'] = 1" andThen script { result["y"] = 1 }
    workflow W(n: Long, l: [Long]) => (r: Long, all: Json) with Mx(k = 3) andThen {
        a = E(x = $.n) with Mx(k = 1) as mx
        b = S(a = a.y, b = [])
        c = E(x = a.y + b.a, s = b) andThen foreach v in $.l {
            d = P(x = $.v * c.y)
            yield W(all = [d.y])
        } andThen when {
            case c.s.a > 0 && !(c.y == 1) => { yield E(y = 1) }
            case _ => { }
        } catch when {
            case c.error_type == "E" => { yield Mx(extra = 1) }
            case _ => { }
        }
        yield W(r = c.y % 2, all = #{"k": [a.y][0]})
    } andThen when {
        case a.y >= 2 => { e = E(x = -a.y) }
        case _ => { }
    } catch {
        f = E(x = 0)
    }
}
"""


@cache
def sources() -> list[str]:
    """The valid suite's programs and EXTRA: what mutations start from (read on first draw, not at import)."""
    return [*valid_texts(), EXTRA]


NAMES = ["a", "b", "c", "s", "x", "y", "n", "v", "E", "W", "Mx", "S", "P", "m", "k", "error", "Long", "Json",
         "zz", "Add", "calc", "when", "_"]
TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\$\.|\d+|\"[^\"\n]*\"|&&|\|\||==|!=|<=|>=|\+\+|=>|\S")
PIECES = ["a", "b", "c", "s", "$.", "x", "E", "W", "Mx", "S", ".", ",", "=", "(", ")", "{", "}", "[", "]", "1",
          "true", "\"t\"", "yield", "andThen", "catch", "when", "case", "_", "=>", "&&", "+", "<", "\n"]


def tokens(text: str) -> list[str]:
    out, pos = [], 0
    for match in TOKEN.finditer(text):
        out.append(text[pos:match.start()])
        out.append(match.group(0))
        pos = match.end()
    out.append(text[pos:])
    return out


@st.composite
def mutated(draw) -> str:
    parts = tokens(draw(st.sampled_from(sources())))
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(parts) - 1))
        action = draw(st.sampled_from(["delete", "insert", "replace", "rename", "rename"]))
        piece = draw(st.sampled_from(PIECES))
        if action == "rename":
            # identifiers swapped for identifiers: mostly still parses, exercising the validator
            names = [i for i, p in enumerate(parts) if re.fullmatch(r"[A-Za-z_]\w*", p)]
            target = names[draw(st.integers(0, len(names) - 1))]
            parts[target] = draw(st.sampled_from(NAMES))
        elif action == "delete":
            parts[index] = ""
        elif action == "insert":
            parts[index] = parts[index] + " " + piece + " "
        else:
            parts[index] = piece if parts[index].strip() else parts[index]
    return "".join(parts)


def test_extra_valid_source_is_valid():
    assert [str(d) for d in check_sources([("m.ffl", EXTRA)])] == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_checking_never_raises(text: str):
    found = check_sources([("m.ffl", text)])
    assert all(isinstance(d, Diagnostic) and d.file == "m.ffl" and d.line >= 1 for d in found)
    assert found == sorted(found)
    errors = [d for d in found if not d.is_warning]
    try:
        compile_sources([("m.ffl", text)])
    except CompileError as err:
        assert err.diagnostics == errors
        assert err.warnings == [d for d in found if d.is_warning]
    else:
        assert errors == []
