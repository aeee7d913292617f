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
