"""Unit tests of the pure expression evaluator (interpreter.program.evaluate)."""

from __future__ import annotations

import pytest

from interpreter.compiler import parse_source
from interpreter.program.evaluate import EvaluationError, StepValue, evaluate, to_text
from interpreter.program.model import (
    ArrayLit,
    Attr,
    Binary,
    Index,
    Lit,
    MapEntry,
    MapLit,
    ParamRef,
    StepRef,
    Unary,
)

STEPS = {
    "s": StepValue("s", {"sum": 145, "none": None, "rec": {"a": [1, 2, 3]}}, ("sum", "none", "rec", "unset")),
    "t": StepValue("t", {"label": "x"}, ("label",)),
}
PARAMS = {"a": 5, "name": "n", "items": [10, 20, 30], "m": {"k": "v", "inner": {"z": 1}}, "nothing": None,
          "flag": True}


def steps(name: str) -> StepValue:
    return STEPS[name]


def expr(text: str):
    """Parse ``text`` as an FFL expression (the default of a parameter)."""
    source = parse_source(f"facet F(x: Json = {text})", "t.ffl")
    return source.decls[0].params[0].default


def ev(text: str, params=None):
    return evaluate(expr(text), PARAMS if params is None else params, steps)


def fails(text: str) -> str:
    with pytest.raises(EvaluationError) as info:
        ev(text)
    return str(info.value)


# ---------------------------------------------------------------- hand-built nodes


def test_literals_params_and_steps_by_node():
    assert evaluate(Lit(value=3), {}, steps) == 3
    assert evaluate(ParamRef(name="a"), PARAMS, steps) == 5
    assert evaluate(Attr(target=StepRef(step="s"), name="sum"), {}, steps) == 145
    assert evaluate(ArrayLit(items=[Lit(value=1), ParamRef(name="a")]), PARAMS, steps) == [1, 5]
    assert evaluate(MapLit(entries=[MapEntry(key="k", value=Lit(value=True))]), {}, steps) == {"k": True}
    assert evaluate(Index(target=ParamRef(name="items"), index=Lit(value=2)), PARAMS, steps) == 30
    assert evaluate(Unary(op="-", operand=Lit(value=2.5)), {}, steps) == -2.5
    assert evaluate(Binary(op="*", left=Lit(value=6), right=Lit(value=7)), {}, steps) == 42


def test_bare_step_reference_is_its_record():
    assert evaluate(StepRef(step="t"), {}, steps) == {"label": "x"}


# ---------------------------------------------------------------- concatenation


@pytest.mark.parametrize("text,expected", [
    ('"total=" ++ 145', "total=145"),
    ('"v" ++ 4.0', "v4.0"),
    ('"a" ++ null ++ "b"', "ab"),
    ('"" ++ true ++ false', "truefalse"),
    ('"l" ++ [1, "x", null]', 'l[1,"x",null]'),
    ('"m" ++ #{"k": 1, b: [true]}', 'm{"k":1,"b":[true]}'),
    ('1 ++ 2', "12"),
    ('"s=" ++ s.sum', "s=145"),
])
def test_concatenation_joins_as_strings(text, expected):
    assert ev(text) == expected


def test_to_text_float_keeps_decimal_point():
    assert to_text(4.0) == "4.0"
    assert to_text(145) == "145"
    assert to_text("é") == "é"
    assert to_text({"a": "é"}) == '{"a":"é"}'


# ---------------------------------------------------------------- arithmetic


@pytest.mark.parametrize("text,expected", [
    ("7 / 2", 3.5),
    ("6 / 3", 2.0),
    ("7 % 3", 1),
    ("-7 % 3", 2),
    ("7 % -3", -2),
    ("2 * (3 + 4) % 5", 4),
    ("1 + 2 * 3", 7),
    ("10 - 2 - 3", 5),
    ("1.5 + 1", 2.5),
    ("-$.a", -5),
    ("$.a * 1 - 0", 5),
    ('"ab" + "cd"', "abcd"),
    ("[1] + [2, 3]", [1, 2, 3]),
])
def test_arithmetic(text, expected):
    value = ev(text)
    assert value == expected
    assert type(value) is type(expected)


def test_integers_stay_integral():
    assert isinstance(ev("3 + 4 * 2 - 1"), int)
    assert isinstance(ev("7 / 7"), float)


@pytest.mark.parametrize("text,words", [
    ("1 / 0", "division by zero"),
    ("1 % 0", "modulo by zero"),
    ('1 + "a"', "needs numbers"),
    ("true + 1", "needs numbers"),
    ('-"x"', "needs a number"),
    ("!1", "needs a boolean"),
])
def test_arithmetic_errors(text, words):
    assert words in fails(text)


# ---------------------------------------------------------------- comparison and logic


@pytest.mark.parametrize("text,expected", [
    ("1 < 2", True), ("2 <= 2", True), ("3 > 4", False), ("4 >= 4.0", True),
    ('"a" < "b"', True), ("1 == 1.0", True), ("true == 1", False), ("null == null", True),
    ("[1, 2] == [1, 2]", True), ('#{"a": 1} != #{"a": 2}', True), ('"1" == 1', False),
    ("s.sum > 100 && !(s.sum == 0)", True),
    ("false || $.flag", True),
    ("$.a >= 0 && $.a <= 1000", True),
])
def test_comparison_and_logic(text, expected):
    assert ev(text) is expected


def test_logic_short_circuits():
    assert ev("false && $.missing") is False
    assert ev("true || $.missing") is True
    assert "not set" in fails("true && $.missing")


@pytest.mark.parametrize("text,words", [
    ("true < false", "cannot compare"),
    ('1 < "a"', "cannot compare"),
    ("1 && true", "needs booleans"),
    ("false || 2", "needs booleans"),
])
def test_comparison_errors(text, words):
    assert words in fails(text)


# ---------------------------------------------------------------- access


@pytest.mark.parametrize("text,expected", [
    ("$.items[0]", 10), ("$.items[-1]", 30), ("[1, 2, 3][1]", 2), ('$.m["k"]', "v"),
    ("$.m.inner.z", 1), ('#{"k": 1}.k', 1), ("s.rec.a[2]", 3), ("s.none", None), ('"abc"[1]', "b"),
    ('[$.name, "b"][0]', "n"), ("$.nothing", None),
])
def test_access(text, expected):
    assert ev(text) == expected


@pytest.mark.parametrize("text,words", [
    ("$.missing", "parameter '$.missing' is not set"),
    ("s.unset", "step 's' never set its return 'unset'"),
    ("s.bogus", "step 's' has no return 'bogus'"),
    ("$.items[3]", "out of range"),
    ('$.items["a"]', "must be an integer"),
    ('$.m["zz"]', "has no key"),
    ("$.m[1]", "must be a string"),
    ("$.m.nope", "'$.m' has no field 'nope'"),
    ("$.a.field", "cannot read field 'field' of integer '$.a'"),
    ("$.nothing.x", "of null"),
    ("$.a[0]", "cannot index integer"),
])
def test_access_errors(text, words):
    assert words in fails(text)


def test_unknown_step_is_an_evaluation_error():
    def lookup(name):
        raise KeyError(name)

    with pytest.raises(EvaluationError, match="step 'zz' is not available"):
        evaluate(Attr(target=StepRef(step="zz"), name="f"), {}, lookup)


def test_evaluation_is_pure():
    params = {"l": [1, 2]}
    first = evaluate(expr("$.l + [3]"), params, steps)
    assert first == [1, 2, 3]
    assert params == {"l": [1, 2]}


@pytest.mark.parametrize("text, params, message", [
    ("$.a / 3", {"a": 10**400}, "'/' overflowed: integer division result too large for a float"),
    ("$.a * 1.5", {"a": 10**400}, "'*' overflowed: int too large to convert to float"),
    ("$.a * $.a * $.a", {"a": 10**2000}, "'*' gives an integer of more than 4300 digits"),
    ("$.a + 0.5", {"a": 10**400}, "'+' overflowed: int too large to convert to float"),
    ("1.0e308 * 10", {}, "'*' overflowed"),
])  # fmt: skip
def test_overflow_and_digit_limit_are_evaluation_errors(text, params, message):
    with pytest.raises(EvaluationError) as info:
        ev(text, params)
    assert str(info.value) == message


def test_any_other_python_error_becomes_an_evaluation_error():
    def broken_steps(name: str) -> StepValue:
        raise RuntimeError("lookup exploded")

    with pytest.raises(EvaluationError, match="'s.sum' failed: RuntimeError: lookup exploded"):
        evaluate(expr("s.sum"), {}, broken_steps)
