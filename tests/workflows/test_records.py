"""A run's records without a server: a fixed clock, the details shown kept in a list, a test logger."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest

from interpreter.program.queries import StepsQuery
from interpreter.workflows.records import WARNINGS_KEPT, Records

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def records(**given) -> tuple[Records, list[str]]:
    shown: list[str] = []
    kept = Records("wf", "run-1", "hash-1", clock=lambda: WHEN, show=shown.append,
                   logger=logging.getLogger("tests.records"), **given)
    return kept, shown


def test_a_step_moves_between_states_and_the_counts_follow():
    kept, _ = records()
    kept.step("a", "ns.F", "running")
    kept.step("b", "ns.G", "running")
    kept.step("a", "ns.F", "completed", returns={"x": 1})
    assert kept.counts["running"] == 1 and kept.counts["completed"] == 1
    assert kept.steps["a"] == {"path": "a", "facet": "ns.F", "state": "completed", "returns": {"x": 1}, "error": None}
    assert list(kept.running) == ["b"]
    assert [r["path"] for r in kept.snapshot()] == ["a", "b"]
    page = kept.page(StepsQuery(state="running"))
    assert [r["path"] for r in page.steps] == ["b"]


def test_the_current_details_name_the_waiting_step_else_the_newest_running_one():
    kept, shown = records(header="**FFL** run", root="Wf")
    assert shown and shown[-1].startswith("**FFL** run")  # a header is shown at once
    kept.step("a", "ns.F", "running")
    assert "ns.F" in shown[-1]
    kept.step("w", "ffl.WaitForSignal", "running")
    kept.note("w", "signal", "go")
    assert "go" in shown[-1] and "ns.F" not in shown[-1]
    kept.step("w", "ffl.WaitForSignal", "completed")
    assert "waiting" not in kept.steps["w"] and not kept.waits


def test_deferred_details_are_rendered_once_for_many_changes_and_show_the_last_state():
    pending: list = []
    kept, shown = records(header="**FFL** run", root="Wf", later=pending.append)
    kept.step("a", "ns.F", "running")
    kept.step("a", "ns.F", "completed", returns={})
    kept.step("b", "ns.G", "running")
    assert shown == [] and len(pending) == 1, "one publication scheduled for the header and three changes"
    pending.pop()()
    assert shown == [] and len(pending) == 1, "the first turn only waits for the next"
    kept.step("b", "ns.G", "completed", returns={})  # what the turn in between did (the next step's wake-up)
    kept.step("c", "ns.H", "running")
    assert len(pending) == 1, "changes in between join the publication already scheduled"
    pending.pop()()
    assert len(shown) == 1 and "2 done, 1 running" in shown[0] and "ns.H" in shown[0]
    kept.step("c", "ns.H", "completed", returns={})
    assert len(pending) == 1, "a change after the publication schedules the next one"


async def test_a_chain_of_steps_publishes_its_details_once_a_step_not_once_a_state():
    """The ``later`` of a workflow: ``call_soon``. A step's completion wakes the next step one turn later."""
    loop = asyncio.get_running_loop()
    kept, shown = records(header="**FFL** run", root="Wf", later=loop.call_soon)
    for k in range(10):
        kept.step(f"s{k}", "ns.F", "running")
        await asyncio.sleep(0)  # the handler's answer: a new activation
        kept.step(f"s{k}", "ns.F", "completed", returns={})
        woken = loop.create_future()
        loop.call_soon(woken.set_result, None)  # the next step wakes in the turn after
        await woken
    for _ in range(3):
        await asyncio.sleep(0)
    assert len(shown) <= 12, f"{len(shown)} publications for 10 steps (one a state would make 20)"
    assert "10 done, 0 running" in shown[-1]


def test_mirror_records_are_stamped_by_the_clock_and_numbered_in_emission_order():
    kept, _ = records(mirror=True, seq=7)
    kept.runner("Wf", "running", program_hash="hash-2")
    kept.step("a", "ns.F", "running", parent=None, block="")
    kept.task("a", "ns.F", "queue-1", {"n": 1})
    kept.step("a/b", "ns.G", "running", parent="a", block="a/blk")
    kept.log("a", "hello")
    assert [r["seq"] for r in kept.buffer] == [7, 8, 9, 10, 11] and kept.seq == 12
    assert {r["time"] for r in kept.buffer} == {WHEN.isoformat()}
    assert [r["kind"] for r in kept.buffer] == ["runner", "step", "task", "step", "log"]
    assert kept.buffer[3]["parent_path"] == "a" and kept.buffer[3]["root_path"] == "a"
    assert kept.buffer[3]["block_path"] == "a/blk"
    assert kept.buffer[1]["program_hash"] == "hash-2"  # the runner record pins the program for what follows


def test_quiet_paths_are_not_mirrored_again_but_still_counted():
    kept, _ = records(mirror=True, quiet={"a"})
    kept.step("a", "ns.F", "completed")
    kept.log("a", "again")
    assert kept.buffer == [] and kept.counts["completed"] == 1


def test_a_block_is_placed_in_the_nearest_recorded_block_above_it_and_keeps_its_element_short():
    kept, _ = records(mirror=True, blocks=["top"])
    kept.block("top/x/it", "AndMap", "running", parent="step", foreach=("x", "v" * 500))
    record = kept.buffer[-1]
    assert record["block_path"] == "top" and record["foreach"] == ["x", "v" * 500]
    assert len(kept.items["top/x/it"]) < 100
    kept.block("elsewhere", "AndThen", "running", parent=None)
    assert kept.buffer[-1]["block_path"] == ""


def test_without_the_mirror_nothing_is_buffered():
    kept, _ = records()
    kept.step("a", "ns.F", "running")
    kept.block("a/b", "AndThen", "running", parent="a")
    kept.task("a", "ns.F", "q")
    kept.runner("Wf", "created")
    assert kept.buffer == []


def test_totals_add_finished_children_and_earlier_runs_and_a_continued_run_carries_all_but_what_it_records_again():
    kept, _ = records(earlier={"completed": 5, "failed": "bad"})
    assert kept.earlier["failed"] == 0  # what is not a count counts nothing
    kept.step("a", "ns.F", "completed")
    kept.step("b", "ns.F", "failed")
    kept.child("c1", "wf/c1", "loop", 0, 9, "running")
    kept.child("c1", "wf/c1", "loop", 0, 9, "completed", {"completed": 10, "failed": 1})
    kept.child("c1", "wf/c1", "loop", 0, 9, "completed", {"completed": 99})  # counted once
    assert kept.totals() == {"running": 0, "completed": 16, "failed": 2, "caught": 0, "cancelled": 0}
    carried = kept.carried_counts(["a", "c1", "unknown"])
    assert carried == {"running": 0, "completed": 5, "failed": 1, "caught": 0, "cancelled": 0}


def test_a_warning_goes_to_the_log_the_step_and_the_newest_warnings(caplog):
    kept, _ = records(mirror=True)
    kept.step("a", "ns.F", "running")
    with caplog.at_level(logging.WARNING, logger="tests.records"):
        kept.warn("a", "value does not fit")
    assert "a: value does not fit" in caplog.text
    assert kept.steps["a"]["warnings"] == ["value does not fit"]
    assert kept.buffer[-1]["message"] == "warning: value does not fit"
    for n in range(WARNINGS_KEPT + 5):
        kept.warn("", f"w{n}")
    assert len(kept.warnings) == WARNINGS_KEPT and kept.warnings[-1]["message"] == f"w{WARNINGS_KEPT + 4}"


@pytest.mark.parametrize("bulky", ["params", "returns"])
def test_a_record_too_large_for_a_batch_keeps_its_identity_and_loses_its_bulk(bulky):
    kept, _ = records(mirror=True)
    kept.step("a", "ns.F", "completed", **{bulky: {"v": "z" * 5_000}}, error="e" * 20_000)
    [record] = kept.take(10, max_bytes=2_000)
    assert record["path"] == "a" and "too large" in record[bulky]["_omitted"]
    assert record["error"].endswith("…(cut)") and len(record["error"]) < 10_100
    assert kept.buffer == []
