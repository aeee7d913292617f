"""The examples' tests written with the pytest plugin: the worked examples of docs/testing.md.

The ``ffl`` fixture comes from the plugin (entry point ``pytest11``); each
program is compiled once per session however many tests load it.
"""

from __future__ import annotations

import pytest

from interpreter.testing import REAL, MockError, signal, update

PEOPLE = {"ada": {"language": "en", "formal": True}, "linus": {"language": "fi", "formal": False}}


@pytest.fixture
def calc(ffl):
    return ffl.load("examples/calc/calc.ffl", handlers=["examples/calc/handlers.py"])


@pytest.fixture
def hello(ffl):
    return ffl.load("examples/hello/program.ffl", handlers=["examples/hello/handlers.py"])


@pytest.fixture
def approval(ffl):
    return ffl.load("examples/approval/approval.ffl")


def test_calc_doubles_through_add(calc):
    result = calc.run("calc.Double", {"a": 21}, mocks={"calc.Add": lambda args: {"sum": args["x"] + args["y"]}})
    assert result.outputs == {"total": 42}
    assert result.calls_to("calc.Add") == [{"x": 21, "y": 21}]


def test_calc_with_its_real_handler(calc):
    assert calc.run("calc.Double", {"a": 4}, mocks={"calc.Add": REAL}).outputs == {"total": 8}


def test_a_failing_add_is_retried_by_policy_then_fails_the_run(calc):
    result = calc.run("calc.Double", {"a": 1}, mocks={"calc.Add": OverflowError("too big")})
    assert result.failure is not None
    assert (result.failure.step, result.failure.facet, result.failure.error_type) == ("b0/s", "calc.Add",
                                                                                      "OverflowError")
    assert result.failure.cause == "too big"
    assert len(result.calls_to("calc.Add")) == 3  # the default policy: three attempts
    assert result.elapsed.total_seconds() == 1 + 2  # the backoff between them, in virtual time


def test_an_unmocked_facet_stops_the_test_by_name(calc):
    with pytest.raises(MockError, match=r"calc.Add is not mocked"):
        calc.run("calc.Double", {"a": 1})


def test_hello_greets_by_the_lookup_answers(hello):
    result = hello.run("hello.Greet", {"names": ["ada", "linus"]}, mocks={
        "hello.Lookup": lambda args: PEOPLE[args["name"]],  # by argument: the foreach looks both up at once
        "hello.Compose": lambda args: {"text": f"{args['greeting']}, {args['name']}"},
        "hello.Summarize": REAL,
    })
    assert result.outputs == {"lines": ["Good day, ada", "Hi, linus"], "summary": "Good day, ada Hi, linus",
                              "count": 2}
    assert sorted(call["greeting"] for call in result.calls_to("hello.Compose")) == ["Good day", "Hi"]


async def test_approval_within_the_hour_pays(approval):
    result = await approval.arun("expenses.Reimburse", {"employee": "ann", "amount": 80.0}, mocks={
        "expenses.Submit": {"ticket": "EXP-1"}, "expenses.Pay": {"reference": "PAY-1"},
    }, signals=[signal("approve", {"approved": True}, at=1800)])
    assert result.outputs == {"ticket": "EXP-1", "approved": True, "reference": "PAY-1"}
    assert result.signals_taken == [("b0/decision", "approve")]
    assert result.elapsed.total_seconds() == 1800 + 5  # the approval, then the hold before paying


async def test_approval_after_the_hour_times_out(approval):
    result = await approval.arun("expenses.Reimburse", {"employee": "ann", "amount": 80.0}, mocks={
        "expenses.Submit": {"ticket": "EXP-1"},
    }, signals=[signal("approve", {"approved": True}, at=7200)])
    assert result.outputs == {"ticket": "EXP-1", "approved": False}
    assert result.calls_to("expenses.Pay") == []


async def test_an_update_nobody_waits_for_is_refused(approval):
    result = await approval.arun("expenses.Reimburse", {"employee": "ann", "amount": 80.0, "wait_seconds": 60},
                                 mocks={"expenses.Submit": {"ticket": "EXP-1"}},
                                 signals=[update("approve", {"approved": True}, at=600)])
    assert result.outputs == {"ticket": "EXP-1", "approved": False}
    assert result.refused == ["approve"]


async def test_a_day_long_approval_window_passes_at_once(approval):
    result = await approval.arun("expenses.Reimburse", {"employee": "ann", "amount": 80.0, "wait_seconds": 86400},
                                 mocks={"expenses.Submit": {"ticket": "EXP-1"}, "expenses.Pay": {"reference": "P"}},
                                 signals=[signal("approve", {"approved": True}, at=86000)])
    assert result.outputs["reference"] == "P"
    assert result.elapsed.total_seconds() == 86005
