"""What a resumed run starts from, without a server: the starter's ``ffl_resume`` entry and the recovery answer."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from interpreter.workflows.resumed import (
    ResumeMarker,
    check_recovered_child,
    resume_marker,
    resumed_chunk,
    resumed_run,
)


def answer(**given) -> dict:
    base = {"memo": {"a": {"r": 1, "a": "d1"}, "b": {"e": ["no", "Refused"]}, "c/x": {"r": 2, "a": "d2"}},
            "seq": 40, "run_id": "first-run", "program_hash": "h1", "config": {"mirror": False}, "runs": 3,
            "signals": {"count": 1}, "children": {"loop/foreach[0-9]": ["wf/c", "r9"]}, "inputs": {"v": 1},
            "snapshot": {"units": []}, "earlier": {"completed": 7}}
    return {**base, **given}


def test_a_well_formed_entry_names_the_run_the_paths_and_the_program():
    assert resume_marker(None, "me") is None
    assert resume_marker({"run": "old", "from": ["a", "b"], "program": "h2"}, "me") == ResumeMarker("old", ("a", "b"), "h2")
    assert resume_marker({"run": "old"}, "me") == ResumeMarker("old")


@pytest.mark.parametrize("value", [{"run": ""}, {"run": 3}, {"run": "old", "from": "a"}, {"run": "old", "from": [""]},
                                   {"run": "old", "program": 1}, ["old"]])
def test_a_malformed_entry_is_refused_saying_what_it_must_be(value):
    with pytest.raises(ApplicationError) as raised:
        resume_marker(value, "me")
    assert raised.value.type == "InvalidResume" and "must be" in raised.value.message


def test_a_run_cannot_resume_itself():
    with pytest.raises(ApplicationError, match="cannot resume itself"):
        resume_marker({"run": "me"}, "me")


def test_a_plain_resume_keeps_completed_results_the_snapshot_and_the_earlier_counts():
    carried = resumed_run(answer(), ResumeMarker("closed"))
    assert set(carried.memo) == {"a", "c/x"}  # the failure runs again
    assert carried.runs == 4 and carried.seq == 40 and carried.run_id == "first-run"
    assert carried.previous_run == "closed" and carried.program_hash == "h1"
    assert carried.snapshot == {"units": []} and carried.earlier == {"completed": 7}
    assert carried.recovered_children == {"loop/foreach[0-9]": ["wf/c", "r9"]}


def test_a_resume_from_a_path_or_onto_another_program_checks_each_call_instead_of_the_snapshot():
    again = resumed_run(answer(), ResumeMarker("closed", ("c",)))
    assert set(again.memo) == {"a"} and again.again == ["c"] and again.snapshot is None and again.earlier is None
    moved = resumed_run(answer(), ResumeMarker("closed", (), "h2"))
    assert moved.program_hash == "h2" and moved.snapshot is None and set(moved.memo) == {"a", "c/x"}


def test_a_child_recovers_only_a_child_of_its_own_run():
    check_recovered_child(["wf/r/loop/foreach[0-9]", "r9"], "wf")
    for recover in (["other/x", "r9"], ["wf/x"], ["wf/x", "r9", "extra"]):
        with pytest.raises(ApplicationError) as raised:
            check_recovered_child(recover, "wf")
        assert raised.value.type == "UntrustedChild"


def test_a_resumed_child_goes_on_in_its_parents_numbering_and_run():
    carried = resumed_chunk(answer(), [], 1234, "root-run", "h1", {"mirror": True})
    assert (carried.seq, carried.run_id, carried.config) == (1234, "root-run", {"mirror": True})
    assert set(carried.memo) == {"a", "c/x"} and carried.snapshot == {"units": []}
    other = resumed_chunk(answer(), [], 1234, "root-run", "h2", {})
    assert other.snapshot is None and other.earlier is None
