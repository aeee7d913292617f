"""FFL coverage reports exactly the places the tests never reached: here an untested when case and catch."""

from __future__ import annotations

from interpreter.compiler import compile_sources
from interpreter.testing import Tester

SHOP = """\
namespace shop {
    event facet Price(item: String) => (cents: Long)
    event facet Ship(cents: Long) => (parcel: String)

    workflow Order(item: String) => (parcel: String, band: String) andThen {
        p = Price(item = $.item) catch {
            yield Price(cents = 0)
        }
        s = Ship(cents = p.cents)
        yield Order(parcel = s.parcel)
    } andThen when {
        case p.cents > 1000 => {
            yield Order(band = "dear")
        }
        case _ => {
            yield Order(band = "cheap")
        }
    }
}
"""


def new_shop() -> Tester:
    return Tester(compile_sources([("shop.ffl", SHOP)]))


def test_a_run_that_misses_a_when_case_and_a_catch_reports_exactly_those_places():
    shop = new_shop()
    result = shop.run("shop.Order", {"item": "tea"},
                      mocks={"shop.Price": {"cents": 300}, "shop.Ship": {"parcel": "P1"}})
    assert result.outputs == {"parcel": "P1", "band": "cheap"}
    missed = [(p.file, p.line, p.kind) for p in shop.coverage.missed]
    assert missed == [("shop.ffl", 6, "catch"), ("shop.ffl", 12, "case")]
    assert [str(p) for p in shop.coverage.missed] == [
        "shop.ffl:6: catch catch of p in shop.Order",
        "shop.ffl:12: case case p.cents > 1000 in shop.Order",
    ]
    assert next(shop.coverage.lines()) == "FFL coverage: 3/5 places (60.0%)"


def test_runs_reaching_the_rest_complete_the_coverage():
    shop = new_shop()
    shop.run("shop.Order", {"item": "tea"}, mocks={"shop.Price": {"cents": 300}, "shop.Ship": {"parcel": "P1"}})
    caught = shop.run("shop.Order", {"item": "gold"},
                      mocks={"shop.Price": KeyError("gold"), "shop.Ship": {"parcel": "P2"}})
    assert caught.outputs == {"parcel": "P2", "band": "cheap"}
    assert shop.coverage.missed[0].kind == "case"
    shop.run("shop.Order", {"item": "tv"}, mocks={"shop.Price": {"cents": 5000}, "shop.Ship": {"parcel": "P3"}})
    assert shop.coverage.missed == []
    assert shop.coverage.as_json()["percent"] == 100.0


def test_a_foreach_body_counts_once_an_iteration_ran():
    hello = Tester(["examples/hello/program.ffl"])
    hello.run("hello.Greet", {"names": []}, mocks={"hello.Summarize": {"summary": "", "count": 0}})
    kinds = [p.kind for p in hello.coverage.missed]
    assert kinds == ["foreach", "step", "case", "step", "case", "step"]



RATIO = """\
namespace calc {
    event facet Divide(x: Long, y: Long) => (quotient: Double)

    workflow Ratio(x: Long, y: Long) => (value: Double, why: String) andThen {
        d = Divide(x = $.x, y = $.y) catch when {
            case d.error_type == "Overflow" => {
                yield Divide(quotient = 0.0)
            }
            case _ => {
                yield Divide(quotient = 1.0)
            }
        }
        e = Divide(x = $.y, y = $.x)
        yield Ratio(value = d.quotient + e.quotient)
    } catch {
        yield Ratio(value = -1.0, why = $.error_type)
    }
}
"""

Overflow = type("Overflow", (Exception,), {})


def divide(args: dict) -> dict:
    if args["x"] == 1:
        raise Overflow("too big")
    return {"quotient": 2.0}


def test_a_workflows_catch_and_the_cases_of_a_catch_when_are_places_of_their_own():
    ratio = Tester(compile_sources([("ratio.ffl", RATIO)]))
    failed = ratio.run("calc.Ratio", {"x": 1, "y": 0}, mocks={"calc.Divide": ZeroDivisionError("division by zero")})
    assert failed.outputs is not None and failed.outputs["why"] == "ZeroDivisionError"
    assert [(p.line, p.kind) for p in ratio.coverage.missed] == [(6, "case")]
    assert ratio.run("calc.Ratio", {"x": 1, "y": 3}, mocks={"calc.Divide": divide}).outputs == {"value": 2.0}
    assert ratio.coverage.missed == []
    assert sorted(p.kind for p in ratio.coverage.places) == ["case", "case", "catch", "catch", "step", "step"]
