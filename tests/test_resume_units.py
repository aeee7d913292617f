"""What a resumed or moved run keeps, decided without a server: the memo rules and the compatibility report."""

from __future__ import annotations

from interpreter.compatibility import AGAIN, KEPT, NEW, REMOVED, compatibility
from interpreter.workflows.memo import call_digest, in_chunk, kept_on_resume, reads_again

from .runtime.harness import compile_text

BEFORE = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    event facet Sum(xs: Json) => (total: Long)
    workflow Run(k: Long) => (total: Long) andThen {
        a = Work(i = $.k)
        b = Work(i = 10)
        c = Sum(xs = [a.y, b.y])
        gone = Work(i = 3)
        yield Run(total = c.total)
    }
}
"""

AFTER = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    event facet Twice(i: Long) => (y: Long)
    event facet Sum(values: Json) => (total: Long)
    workflow Run(k: Long) => (total: Long) andThen {
        a = Work(i = $.k)
        b = Twice(i = 10)
        c = Sum(values = [a.y, b.y])
        added = Work(i = 4)
        yield Run(total = c.total)
    }
}
"""


def done(facet: str, args: dict, result: dict) -> dict:
    return {"r": result, "a": call_digest(facet, args)}


RESULTS = {
    "b0/a": done("pipe.Work", {"i": 1}, {"y": 2}),
    "b0/b": done("pipe.Work", {"i": 10}, {"y": 20}),
    "b0/c": done("pipe.Sum", {"xs": [2, 20]}, {"total": 22}),
    "b0/gone": done("pipe.Work", {"i": 3}, {"y": 6}),
}


async def test_the_report_of_a_real_edit_reads_like_ffl_step_path_and_reason():
    report = await compatibility(compile_text(BEFORE), compile_text(AFTER), "pipe.Run", {"k": 1}, RESULTS)
    lines = {line.path: line for line in report.lines}
    assert (lines["b0/a"].verdict, lines["b0/a"].step) == (KEPT, "a = pipe.Work(i = $.k)")
    assert (lines["b0/b"].verdict, lines["b0/b"].reason) == (AGAIN, "facet changed: pipe.Work → pipe.Twice")
    assert lines["b0/c"].verdict == AGAIN
    assert lines["b0/c"].reason == "arguments differ: xs no longer given; values = [2,20] added"
    assert lines["b0/c"].step == "c = pipe.Sum(values = [a.y, b.y])"
    assert (lines["b0/added"].verdict, lines["b0/gone"].verdict) == (NEW, REMOVED)
    assert sorted(report.again) == ["b0/added", "b0/b", "b0/c"]
    text = report.text()
    assert "2 steps run again:\n  b0/b  b = pipe.Twice(i = 10)  — facet changed: pipe.Work → pipe.Twice\n" in text
    assert "1 step removed (its result is dropped):\n  b0/gone  gone = pipe.Work(i = 3)" in text


async def test_a_running_run_conflicts_when_a_completed_step_or_a_call_in_flight_would_change():
    running = {key: RESULTS[key] for key in ("b0/a", "b0/b")}
    report = await compatibility(compile_text(BEFORE), compile_text(AFTER), "pipe.Run", {"k": 1}, running,
                                 in_flight=["b0/gone"])
    assert [(line.path, line.reason) for line in report.conflicts] == [
        ("b0/b", "facet changed: pipe.Work → pipe.Twice"),
        ("b0/gone", "the new program does not call pipe.Work here")]
    same = await compatibility(compile_text(BEFORE), compile_text(BEFORE), "pipe.Run", {"k": 1}, running,
                               in_flight=["b0/c"])
    assert same.conflicts == [] and {line.verdict for line in same.lines} == {KEPT, AGAIN}


def test_a_resumed_run_keeps_completed_results_and_drops_failures_failed_children_and_from_paths():
    memo = {
        "b0/a": {"r": {"y": 1}, "a": "x"},
        "b0/b": {"e": ["boom", "ValueError"]},
        "b0/f/b0/foreach[0-9]": {"writes": [], "failure": None, "counts": {}},
        "b0/f/b0/foreach[10-19]": {"writes": [], "failure": {"path": "p"}, "counts": {}},
        "b0/g/b0/foreach[0-9]": {"writes": [], "failure": None, "counts": {}},
        "b0/old": {"r": {}},
    }
    kept = kept_on_resume(memo, ("b0/g/b0/foreach[3]/w",))
    assert sorted(kept) == ["b0/a", "b0/f/b0/foreach[0-9]", "b0/old"]
    assert kept["b0/a"] == {"r": {"y": 1}, "a": "x", "p": 1}  # marked: kept from the run resumed
    assert sorted(kept_on_resume(memo, (), other_program=True)) == ["b0/a"]  # no digest: cannot be checked


def test_paths_inside_a_chunk_and_steps_reading_a_step_that_runs_again():
    assert in_chunk("b0/f/b0/foreach[10-19]", "b0/f/b0/foreach[12]/w")
    assert not in_chunk("b0/f/b0/foreach[10-19]", "b0/f/b0/foreach[20]/w")
    assert not in_chunk("b0/f/b0/foreach[10-19]", "b0/g/b0/foreach[12]/w")
    assert reads_again("b0/c", ["a"], {"b0/a"})
    assert reads_again("b0/t", ["all"], {"b0/all/b0/foreach[5]/w"})  # a step holding one that runs again
    assert reads_again("b0/all/b0/foreach[2]/w", ["base"], {"b0/base"})  # an outer step, from inside
    assert not reads_again("b0/c", ["b"], {"b0/a"})
    assert call_digest("pipe.Work", {"i": 1, "j": 2}) == call_digest("pipe.Work", {"j": 2, "i": 1})
    assert call_digest("pipe.Work", {"i": 1}) != call_digest("pipe.Twice", {"i": 1})


async def test_the_check_never_waits_for_a_signal_or_a_timer():
    waits = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    workflow Run(k: Long) => (total: Long) andThen {
        w = ffl.WaitForSignal(name = "go")
        s = ffl.Sleep(seconds = 3600)
        a = Work(i = $.k)
        yield Run(total = a.y)
    }
}
"""
    results = {"b0/w": {"r": {"payload": 1, "timed_out": False}}, "b0/a": done("pipe.Work", {"i": 1}, {"y": 2})}
    report = await compatibility(compile_text(waits), compile_text(waits), "pipe.Run", {"k": 1}, results,
                                 other_program=False)
    assert report.stopped == ""
    assert [(line.path, line.verdict) for line in report.lines] == [("b0/a", KEPT)]
