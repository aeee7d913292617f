"""Property tests: the parser never fails with anything but FFLSyntaxError, and
expressions printed with minimal parentheses parse back to the same tree."""

from __future__ import annotations

import re
from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interpreter.compiler.diagnostics import FFLSyntaxError
from interpreter.compiler.parser import parse_source
from interpreter.program.model import Attr, Binary, Index, Lit, ParamRef, SourceFile, StepRef, Unary
from tests.conformance_suite import ffl_texts

SETTINGS = settings(
    max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

_EXTRA = """
namespace x.y { uses a.b
  /** doc */ workflow W(p: [Long] = [1, 2]) => (r: Json) with M(k = 1) script python {
      d = {"a": "}"}  # }
  } andThen foreach v in $.p { s = F(a = $.v.f[0] ++ "s" , b = #{"k": -1, k2: !true}) andThen script "x" catch { } }
  andThen when { case s.r > 1 || $.p == null => { yield W(r = 2.5E-3 % 2) } case _ => { } }
  catch when { case _ => { } }
  event facet E() prompt { system "s" template "{p}" model "m" }
  schema S { a: String, b: [x.y.S] }
  implicit i = E(q = 1)
}
"""


@cache
def programs() -> list[str]:
    """_EXTRA and every program of the conformance suite (read on first use, not at import)."""
    return [_EXTRA, *ffl_texts()]


_TOKEN = re.compile(r'\d+\.\d+(?:[eE][+-]?\d+)?|"(?:[^"\\\n]|\\.)*"|\$\.\w+|\w+|==|!=|<=|>=|=>|\|\||&&|\+\+|#\{|/\*\*|/\*|\*/|//|\S|\n')
VOCABULARY = [
    "{", "}", "(", ")", "[", "]", "#{", ",", ":", ";", "=", "=>", "\n", '"', "'", "/*", "*/", "/**", "//",
    "\\", "$", "$.", ".", "_", "script", "python", "script {", "script python {", "andThen", "catch", "when",
    "case", "foreach", "in", "yield", "with", "as", "facet", "event", "workflow", "namespace", "schema",
    "implicit", "uses", "prompt", "1", "1.5", "2.5E-3", "true", "null", "<", "<", "+", "-", "!", "++", "&&",
    "\x00", "\ud800", "é", "\t", '"\\u12"', '"\\ud800"', "9" * 30, "'''", "#",
]  # fmt: skip


def _outcome(text: str) -> None:
    try:
        result = parse_source(text, "p.ffl")
    except FFLSyntaxError as exc:
        assert exc.diagnostics and all(d.file == "p.ffl" and d.line >= 0 for d in exc.diagnostics)
        assert all(d.message for d in exc.diagnostics)
    else:
        assert isinstance(result, SourceFile)
        result.model_dump_json()  # whatever parses must serialise


@SETTINGS
@given(st.text(max_size=300))
def test_arbitrary_text_parses_or_raises_syntax_error(text):
    _outcome(text)


@SETTINGS
@given(st.lists(st.sampled_from(VOCABULARY + [" ", "a", "F", "x"]), max_size=60).map("".join))
def test_token_soup_parses_or_raises_syntax_error(text):
    _outcome(text)


@st.composite
def mutated_programs(draw) -> str:
    tokens = _TOKEN.findall(draw(st.sampled_from(programs())))
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(tokens)))
        action = draw(st.sampled_from(["delete", "insert", "duplicate"]))
        if action == "delete" and where < len(tokens):
            del tokens[where]
        elif action == "insert":
            tokens.insert(where, draw(st.sampled_from(VOCABULARY)))
        elif where < len(tokens):
            tokens.insert(where, tokens[where])
    return " ".join(tokens)


@SETTINGS
@given(mutated_programs())
def test_mutated_programs_parse_or_raise_syntax_error(text):
    _outcome(text)


def _parses(text: str) -> bool:
    try:
        parse_source(text)
    except FFLSyntaxError:
        return False
    return True


def test_respacing_tokens_keeps_the_outcome():
    """The mutation base is sound: re-joined tokens parse exactly when the original does."""
    outcomes = [(_parses(text), _parses(" ".join(_TOKEN.findall(text)))) for text in programs()]
    assert all(a == b for a, b in outcomes)
    assert sum(a for a, _ in outcomes) >= 5


# ----------------------------------------------------------------------------- expression round trip

_LEVEL = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "++": 4}
_LEVEL.update({"+": 5, "-": 5, "*": 6, "/": 6, "%": 6})
UNARY_LEVEL, POSTFIX_LEVEL, ATOM_LEVEL = 7, 8, 9

names = st.sampled_from(["a", "b", "step_1", "x"])
atoms = st.one_of(
    st.integers(0, 10**6).map(lambda v: Lit(value=v)),
    st.sampled_from([True, False, None]).map(lambda v: Lit(value=v)),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=5).map(lambda v: Lit(value=v)),
    names.map(lambda n: ParamRef(name=n)),
    names.map(lambda n: StepRef(step=n)),
)


def _extend(children):
    non_number = children.filter(lambda e: not (isinstance(e, Lit) and type(e.value) in (int, float)))
    return st.one_of(
        st.builds(lambda op, left, right: Binary(op=op, left=left, right=right), st.sampled_from(sorted(_LEVEL)), children, children),
        st.builds(lambda op, e: Unary(op=op, operand=e), st.sampled_from(["-", "!"]), non_number),
        st.builds(lambda t, n: Attr(target=t, name=n), children, names),
        st.builds(lambda t, i: Index(target=t, index=i), children, children),
    )


expressions = st.recursive(atoms, _extend, max_leaves=12)


def _level(e) -> int:
    if isinstance(e, Binary):
        return _LEVEL[e.op]
    if isinstance(e, Unary):
        return UNARY_LEVEL
    if isinstance(e, (Attr, Index)):
        return POSTFIX_LEVEL
    return ATOM_LEVEL


def render(e) -> str:
    """Source text with only the parentheses precedence and associativity require."""

    def wrap(child, needed: bool) -> str:
        text = render(child)
        return f"({text})" if needed else text

    if isinstance(e, Lit):
        if isinstance(e.value, str):
            return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        if e.value is None or isinstance(e.value, bool):
            return {True: "true", False: "false", None: "null"}[e.value]
        return str(e.value)
    if isinstance(e, ParamRef):
        return f"$.{e.name}"
    if isinstance(e, StepRef):
        return e.step
    if isinstance(e, Attr):
        return f"{wrap(e.target, _level(e.target) < POSTFIX_LEVEL or _is_number(e.target))}.{e.name}"
    if isinstance(e, Index):
        return f"{wrap(e.target, _level(e.target) < POSTFIX_LEVEL)}[{render(e.index)}]"
    if isinstance(e, Unary):
        return f"{e.op}{wrap(e.operand, _level(e.operand) < UNARY_LEVEL)}"
    level = _LEVEL[e.op]
    comparison = level == 3
    left = wrap(e.left, _level(e.left) < level or (comparison and _level(e.left) == level))
    right = wrap(e.right, _level(e.right) <= level)
    return f"{left} {e.op} {right}"


def _is_number(e) -> bool:
    return isinstance(e, Lit) and type(e.value) in (int, float)


def _plain(e):
    """The tree as nested tuples, without locations."""
    if isinstance(e, Lit):
        return ("lit", type(e.value).__name__, e.value)
    if isinstance(e, ParamRef):
        return ("param", e.name)
    if isinstance(e, StepRef):
        return ("step", e.step)
    if isinstance(e, Attr):
        return ("attr", _plain(e.target), e.name)
    if isinstance(e, Index):
        return ("index", _plain(e.target), _plain(e.index))
    if isinstance(e, Unary):
        return ("unary", e.op, _plain(e.operand))
    return ("binary", e.op, _plain(e.left), _plain(e.right))


@SETTINGS
@given(expressions)
def test_minimal_parentheses_round_trip(tree):
    text = render(tree)
    (facet,) = parse_source(f"facet F(x: Json = {text})").decls
    assert _plain(facet.params[0].default) == _plain(tree), text
