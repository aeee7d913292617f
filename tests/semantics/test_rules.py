"""The rules a run's release decides, in memory: the seed's lifecycle against the order of runs started before
it, and type checks that fail or warn."""

from __future__ import annotations

import pytest

from interpreter.compiler import compile_sources
from interpreter.semantics import Rules, StepFailure
from interpreter.semantics.memory import MemoryEffects, run_in_memory

SOURCE = """namespace t {
    event facet Grade(score: Long) => (level: String, seen: String) script {
        result["level"] = "from-script"
        result["hint"] = "script-ran-first"
    }
    workflow Scripted(score: Long) => (level: String, seen: String) andThen {
        g = Grade(score = $.score)
        yield Scripted(level = g.level, seen = g.seen)
    }
    workflow Captured() => (grade: String) andThen {
        yield Captured(grade = "from-yield")
    } andThen script { result["grade"] = "from-script" }
    workflow Cases(v: Long) => (status: String) andThen when {
        case $.v > 0 => { yield Cases(status = "first") }
        case $.v > 1 => { yield Cases(status = "second") }
        case _ => { yield Cases(status = "none") }
    }
    event facet Count() => (n: Long, label: String)
    workflow Counted(n: Long) => (n: Long, label: String) andThen {
        c = Count()
        yield Counted(n = c.n, label = c.label)
    }
}
"""

PROGRAM = compile_sources([("t.ffl", SOURCE)])
OLD = Rules(seed_lifecycle=False, integral_doubles=False)


def grade(payload: dict) -> dict:
    return {"level": "from-handler", "seen": payload.get("hint", "no script before the handler")}


async def scripted_result(rules: Rules) -> dict:
    async def script(call):
        return {"level": "from-script", "hint": "script-ran-first"} if call.owner == "t.Grade" else {
            "grade": "from-script"}

    effects = MemoryEffects({"t.Grade": grade}, scripts=script)
    return (await run_in_memory(PROGRAM, "t.Scripted", {"score": 1}, effects, rules)).returns


async def test_an_event_facets_script_runs_before_its_handler_whose_returns_win():
    assert await scripted_result(Rules()) == {"level": "from-handler", "seen": "script-ran-first"}


async def test_runs_started_before_the_seed_lifecycle_keep_the_script_after_the_handler():
    assert await scripted_result(OLD) == {"level": "from-script", "seen": "no script before the handler"}


@pytest.mark.parametrize(("rules", "grade_"), [(Rules(), "from-yield"), (OLD, "from-script")])
async def test_a_yield_is_captured_after_a_script_block_writing_the_same_return(rules, grade_):
    async def script(call):
        return {"grade": "from-script"}

    run = await run_in_memory(PROGRAM, "t.Captured", {}, MemoryEffects({}, scripts=script), rules)
    assert run.returns == {"grade": grade_}


@pytest.mark.parametrize(("rules", "status"), [(Rules(), "first"), (OLD, "second")])
async def test_the_first_matching_when_case_sets_a_return(rules, status):
    run = await run_in_memory(PROGRAM, "t.Cases", {"v": 5}, MemoryEffects({}), rules)
    assert run.returns == {"status": status}


async def test_a_double_without_a_fraction_fits_long_and_one_with_a_fraction_does_not():
    whole = await run_in_memory(PROGRAM, "t.Counted", {"n": 1}, MemoryEffects({"t.Count": lambda p: {
        "n": 331750.0, "label": "x"}}))
    assert whole.failure is None and whole.returns == {"n": 331750.0, "label": "x"}
    old = await run_in_memory(PROGRAM, "t.Counted", {"n": 1}, MemoryEffects({"t.Count": lambda p: {
        "n": 331750.0, "label": "x"}}), OLD)
    assert isinstance(old.failure, StepFailure) and "expects Long, got double 331750.0" in old.failure.cause
    frac = await run_in_memory(PROGRAM, "t.Counted", {"n": 1}, MemoryEffects({"t.Count": lambda p: {
        "n": 1.5, "label": "x"}}))
    assert isinstance(frac.failure, StepFailure) and frac.failure.error_type == "TypeError"


async def test_type_checks_warn_passes_a_mismatching_input_return_and_output_on_with_warnings():
    handlers = {"t.Count": lambda p: {"n": "seven", "label": 3}}
    strict = await run_in_memory(PROGRAM, "t.Counted", {"n": 1}, MemoryEffects(handlers))
    assert isinstance(strict.failure, StepFailure) and strict.failure.path == "b0/c"
    run = await run_in_memory(PROGRAM, "t.Counted", {"n": "one"}, MemoryEffects(handlers), Rules(type_checks="warn"))
    assert run.failure is None and run.returns == {"n": "seven", "label": 3}
    where = [(path, message.split(":")[0]) for path, message in run.reporter.warnings]
    assert where == [("", "workflow 't.Counted'"), ("b0/c", "t.Count"), ("", "t.Counted")]
    assert "return 'n' expects Long, got string \"seven\"" in run.reporter.warnings[1][1]
