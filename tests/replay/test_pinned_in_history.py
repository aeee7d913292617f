"""``ffl status --graph`` and the benchmarks find the program a run pinned in its history, in either form:
an activity's result (up to 0.2.0.dev5) or a local activity's marker (since 0.2.0.dev6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from interpreter.activities.value_codec import value_converter
from interpreter.cli.run_view import loaded_payload
from interpreter.program.pinned import unpack_program

HISTORIES = Path(__file__).resolve().parent / "histories"


def pinned(version: str) -> tuple[str, dict]:
    """The workflow type of a recorded run and the LoadProgram answer its history holds."""
    path = HISTORIES / version / "dataflow.json"
    history = WorkflowHistory.from_json("pinned", path.read_text(encoding="utf-8"))
    scheduled: dict[int, str] = {}
    found = [p for p in (loaded_payload(event, scheduled) for event in history.events) if p is not None]
    assert len(found) == 1, f"{version}: one LoadProgram result, not {len(found)}"
    workflow_type = history.events[0].workflow_execution_started_event_attributes.workflow_type.name
    return workflow_type, value_converter().payload_converter.from_payload(found[0], dict)


@pytest.mark.parametrize("version", ["0.2.0.dev5", "0.2.0.dev6"])
def test_the_pinned_program_is_found_as_activity_result_or_local_activity_marker(version):
    workflow_type, loaded = pinned(version)
    assert len(loaded["hash"]) == 64
    assert unpack_program(loaded).facets[workflow_type].kind == "workflow"
