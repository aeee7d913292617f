"""The boundary checks as pure functions: JSON depth, non-finite numbers, digits, declared types."""

from __future__ import annotations

import json
import math

import pytest

from interpreter.program.model import TypeRef
from interpreter.program.values import (
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    ValueProblem,
    check_type,
    check_value,
    dumps_checked,
    input_problems,
    loads_bounded,
    return_problem,
    scan_json,
)

from .harness import compile_text


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


@pytest.mark.parametrize("depth", [1, 50, MAX_JSON_DEPTH])
def test_json_up_to_the_depth_limit_passes(depth):
    assert scan_json(nested(depth)) is None
    assert scan_json('{"a":' * depth + "1" + "}" * depth) is None
    assert check_value(json.loads(nested(depth))) is None


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 1000, 100_000])
def test_json_past_the_depth_limit_is_refused_without_recursion(depth):
    text = nested(depth)
    assert "nested more than 200 levels" in scan_json(text)
    with pytest.raises(ValueProblem, match="nested more than 200 levels"):
        loads_bounded(text)
    value: list = []
    for _ in range(depth - 1):  # built iteratively: too deep for json or repr
        value = [value]
    assert "nested more than 200 levels" in check_value(value)


def test_brackets_and_constants_inside_strings_do_not_count():
    text = json.dumps({"s": "[" * 500 + "NaN Infinity" + "]" * 10, "t": 'a \\" [[[ "'})
    assert scan_json(text) is None
    assert loads_bounded(text)["s"].startswith("[[[")


def test_mixed_list_and_map_nesting_is_measured():
    deep = '{"a": [' * 100 + "{}" + "]}" * 100  # 201 levels: 200 pairs and the innermost map
    assert "nested" in scan_json(deep)
    assert scan_json('{"a": [' * 99 + "1" + "]}" * 99) is None
    assert scan_json("[" + ",".join(nested(150) for _ in range(1000)) + "]") is None


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": Infinity}', '[-Infinity]'])
def test_non_finite_json_constants_are_refused(text):
    assert "non-finite" in scan_json(text)
    with pytest.raises(ValueProblem, match="non-finite"):
        loads_bounded(text)


def test_a_float_too_large_for_a_double_is_refused():
    with pytest.raises(ValueProblem, match=r"non-finite number \(inf\) at \$\.x"):
        loads_bounded('{"x": 1e400}')


def test_integers_past_the_digit_limit_are_refused():
    assert scan_json("[" + "9" * MAX_INT_DIGITS + "]") is None
    assert "more than 4300 digits" in scan_json("[" + "9" * (MAX_INT_DIGITS + 1) + "]")
    assert check_value({"a": [10**MAX_INT_DIGITS]}) == "holds an integer of more than 4300 digits at $.a[0]"
    assert check_value(-(10**MAX_INT_DIGITS - 1)) is None


def test_dumps_checked_never_writes_infinity_or_nan():
    assert dumps_checked({"a": 1.5}) == '{"a": 1.5}'
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(ValueProblem, match="non-finite"):
            dumps_checked({"total": [bad]})


SCHEMAS = compile_text("""
namespace t {
    schema Address { street: String, number: Long, tags: [String] }
    schema Person { name: String, home: Address }
    workflow W(n: Long, i: Int, d: Double, s: String, b: Boolean, j: Json, xs: [Long], grid: [[Double]],
               p: Person) => (n: Long, p: Person) andThen { yield W(n = $.n) }
}
""")


def problem(value, name: str, depth: int = 0) -> str | None:
    return check_type(value, TypeRef(name=name, depth=depth), SCHEMAS.schemas, "parameter 'x'")


@pytest.mark.parametrize("value, name, depth", [
    (1, "Long", 0), (-(10**30), "Long", 0), (7, "Int", 0), (1, "Double", 0), (2.5, "Double", 0),
    ("s", "String", 0), (False, "Boolean", 0), ({"any": [1, "x", None]}, "Json", 0), ([1, 2], "Long", 1),
    ([[1.5], []], "Double", 2), (None, "Long", 0), ([None, 1], "Long", 1),
    ({"name": "Ada", "home": {"street": "Main", "number": 5, "tags": ["x"]}}, "t.Person", 0),
    ({"name": "Ada"}, "t.Person", 0), (3, "Unknown", 0), (2.0, "Int", 0), (331750.0, "Long", 0),
])  # fmt: skip
def test_values_that_fit_their_type(value, name, depth):
    assert problem(value, name, depth) is None


def test_a_double_without_a_fraction_is_refused_where_long_is_declared_for_runs_before_0_2_0_dev3():
    assert check_type(2.0, TypeRef(name="Int", depth=0), SCHEMAS.schemas, "parameter 'x'",
                      integral_doubles=False) == "parameter 'x' expects Int, got double 2.0"


@pytest.mark.parametrize("value, name, depth, message", [
    ("not a number", "Long", 0, "parameter 'x' expects Long, got string \"not a number\""),
    (1.5, "Long", 0, "parameter 'x' expects Long, got double 1.5"),
    (2.5, "Int", 0, "parameter 'x' expects Int, got double 2.5"),
    (True, "Long", 0, "parameter 'x' expects Long, got boolean true"),
    (True, "Double", 0, "parameter 'x' expects Double, got boolean true"),
    (1, "String", 0, "parameter 'x' expects String, got integer 1"),
    ("true", "Boolean", 0, "parameter 'x' expects Boolean, got string \"true\""),
    (math.nan, "Double", 0, "parameter 'x' is a non-finite number (nan), which JSON cannot represent"),
    (5, "Long", 1, "parameter 'x' expects [Long], got integer 5"),
    ([1, "2"], "Long", 1, "parameter 'x'[1] expects Long, got string \"2\""),
    ([[1.0], [True]], "Double", 2, "parameter 'x'[1][0] expects Double, got boolean true"),
    ("Ada", "t.Person", 0, "parameter 'x' expects t.Person, got string \"Ada\""),
    ({"name": "Ada", "home": {"number": "5"}}, "t.Person", 0, "parameter 'x'.home.number expects Long, got string \"5\""),
    ({"name": "Ada", "age": 3}, "t.Person", 0, "parameter 'x' expects t.Person, which has no field 'age'"),
])  # fmt: skip
def test_values_that_do_not_fit_name_place_expected_and_received(value, name, depth, message):
    assert problem(value, name, depth) == message


def test_input_problems_lists_every_bad_parameter():
    decl = SCHEMAS.facets["t.W"]
    good = {"n": 1, "i": 2, "d": 0.5, "s": "x", "b": True, "j": None, "xs": [], "grid": [[1]],
            "p": {"name": "A"}}
    assert input_problems(SCHEMAS, decl, good) == []
    bad = {**good, "n": "42", "xs": [1, 1.5]}
    assert input_problems(SCHEMAS, decl, bad) == ["parameter 'n' expects Long, got string \"42\"",
                                                  "parameter 'xs'[1] expects Long, got double 1.5"]


def test_return_problem_names_the_field_and_ignores_undeclared_keys():
    decl = SCHEMAS.facets["t.W"]
    assert return_problem(SCHEMAS, decl, {"n": 3, "extra": "anything"}) is None
    assert return_problem(SCHEMAS, decl, {"n": "3"}) == \
        "handler result does not fit the declared returns: return 'n' expects Long, got string \"3\""
