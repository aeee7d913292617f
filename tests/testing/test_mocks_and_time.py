"""Mocks, retries and virtual time as a test sees them: what the in-memory run promises beyond the language."""

from __future__ import annotations

import asyncio

import pytest

from interpreter.compiler import compile_sources
from interpreter.testing import REAL, MockError, Tester, signal

RACE = """\
namespace t {
    event facet Note(what: String) => (ok: Boolean)
        with ffl.Retry(max_attempts = 4, initial_seconds = 10, backoff = 3.0, max_seconds = 50,
                       non_retryable = ["Fatal"])

    workflow Race() => (slow: Boolean, quick: Boolean) andThen {
        long = ffl.Sleep(seconds = 86400) andThen {
            a = Note(what = "day")
            yield Race(slow = a.ok)
        }
        short = ffl.Sleep(seconds = 60) andThen {
            b = Note(what = "minute")
            yield Race(quick = b.ok)
        }
    }

    workflow Wait() => (got: Json) andThen {
        w = ffl.WaitForSignal(name = "go")
        yield Wait(got = w.payload)
    }

    workflow Then() => (timed_out: Boolean) andThen {
        w = ffl.WaitForSignal(name = "go", timeout_seconds = 3600) andThen {
            nap = ffl.Sleep(seconds = 10)
        }
        yield Then(timed_out = w.timed_out)
    }

    workflow Alone() => (ok: Boolean) andThen {
        n = Note(what = "alone")
        yield Alone(ok = n.ok)
    }

    workflow Once() => (ok: Boolean) andThen {
        n = Note(what = "once") with ffl.Retry(max_attempts = 1)
        yield Once(ok = n.ok)
    }
}
"""


@pytest.fixture(scope="module")
def race() -> Tester:
    return Tester(compile_sources([("race.ffl", RACE)]))


def test_timers_fire_in_deadline_order_in_no_real_time(race: Tester):
    result = race.run("t.Race", mocks={"t.Note": {"ok": True}})
    assert result.outputs == {"slow": True, "quick": True}
    assert [call.args["what"] for call in result.calls] == ["minute", "day"]
    assert result.elapsed.total_seconds() == 86400


def test_retries_follow_the_facets_policy_with_its_backoff_in_virtual_time(race: Tester):
    result = race.run("t.Race", mocks={"t.Note": [RuntimeError("a"), RuntimeError("b"), {"ok": True},
                                                  {"ok": False}]})
    assert result.outputs == {"quick": True, "slow": False}
    assert len(result.calls_to("t.Note")) == 4


def test_a_policy_gives_up_after_its_attempts_waiting_as_it_says(race: Tester):
    result = race.run("t.Alone", mocks={"t.Note": lambda args: 1 / 0})
    assert result.failure is not None and result.failure.error_type == "ZeroDivisionError"
    assert (result.failure.step, result.failure.facet) == ("b0/n", "t.Note")
    assert len(result.calls_to("t.Note")) == 4
    assert result.elapsed.total_seconds() == 10 + 30 + 50  # 10, then 30, then 90 capped at 50


def test_a_failure_waits_for_its_siblings_as_the_language_says(race: Tester):
    result = race.run("t.Race", mocks={"t.Note": lambda args: 1 / 0})
    assert result.failure is not None and result.failure.step == "b0/short/b0/b"
    assert [call.args["what"] for call in result.calls] == ["minute"] * 4  # the day's tail is skipped
    assert result.elapsed.total_seconds() == 86400  # but its timer runs out first


def test_a_non_retryable_type_and_a_calls_own_policy_stop_at_once(race: Tester):
    fatal = type("Fatal", (Exception,), {})
    assert len(race.run("t.Race", mocks={"t.Note": fatal("no")}).calls) == 1
    assert len(race.run("t.Once", mocks={"t.Note": RuntimeError("no")}).calls) == 1


def test_a_wait_without_timeout_that_nobody_answers_fails_by_name(race: Tester):
    result = race.run("t.Wait")
    assert result.failure is not None
    assert (result.failure.step, result.failure.error_type) == ("b0/w", "SignalNeverSent")
    assert race.run("t.Wait", signals=[signal("go", 7, at=999)]).outputs == {"got": 7}


def test_a_wait_answered_early_leaves_no_timeout_behind(race: Tester):
    result = race.run("t.Then", signals=[signal("go", at=60)])
    assert result.outputs == {"timed_out": False}
    assert result.elapsed.total_seconds() == 60 + 10
    assert race.run("t.Then").elapsed.total_seconds() == 3600 + 10


def test_a_list_of_answers_that_runs_out_stops_the_test(race: Tester):
    with pytest.raises(MockError, match=r"t.Note was called 2 times, but its mock lists 1 answers"):
        race.run("t.Race", mocks={"t.Note": [{"ok": True}]})


def test_mocking_a_facet_the_program_lacks_is_a_mistake_of_the_test(race: Tester):
    with pytest.raises(MockError, match=r"mocks name t.Nope, not an event facet"):
        race.run("t.Race", mocks={"t.Nope": {}})
    with pytest.raises(MockError, match=r"t.Note is marked real, but no handler file registers it"):
        race.run("t.Race", mocks={"t.Note": REAL})


async def test_runs_side_by_side_in_one_loop_each_keep_their_own_time(race: Tester):
    runs = await asyncio.gather(*(race.arun("t.Then", signals=[signal("go", at=at)]) for at in (300, 100, 200)))
    assert [run.elapsed.total_seconds() for run in runs] == [310, 110, 210]
