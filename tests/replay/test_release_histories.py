"""Upgrades never break running workflows: every recorded release's histories replay with today's code.

``tests/replay/histories/<version>/`` holds histories recorded by that
release (``python -m tests.replay.record VERSION``). A change to the
interpreter workflow that alters replay must be guarded with
``workflow.patched`` (see docs/upgrading.md), or this test fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from interpreter.workflows import FFLWorkflow
from tests.replay.history_tasks import task_commands

HISTORIES = Path(__file__).resolve().parent / "histories"


def _recorded() -> list[Path]:
    files = sorted(f for f in HISTORIES.glob("*/*.json") if f.name != "workflow-ids.json")
    assert files, f"no recorded histories under {HISTORIES}"
    return files


def _workflow_id(path: Path) -> str:
    """The id a history replays under: its own where its decisions use it (children's ids), else a unique one."""
    index = path.parent / "workflow-ids.json"
    ids = json.loads(index.read_text(encoding="utf-8")) if index.exists() else {}
    return ids.get(path.stem) or f"{path.parent.name}/{path.stem}"


async def _aiter(items):
    for item in items:
        yield item


async def _failures_with_patch_forced(monkeypatch, patch_id: str, path: Path, workflow_id: str) -> list[str]:
    """The replay failures of one recorded history with ``patch_id`` forced on, as if the run had started with it."""
    from temporalio import workflow
    from temporalio.worker import UnsandboxedWorkflowRunner

    patched = workflow.patched
    monkeypatch.setattr(workflow, "patched", lambda name: True if name == patch_id else patched(name))
    history = WorkflowHistory.from_json(workflow_id, path.read_text(encoding="utf-8"))
    result = await Replayer(workflows=[FFLWorkflow], workflow_runner=UnsandboxedWorkflowRunner()).replay_workflows(
        _aiter([history]), raise_on_replay_failure=False)
    return [str(err) for err in result.replay_failures.values()]


@pytest.mark.slow  # every history of every release, sandboxed: half a minute
async def test_every_recorded_release_replays_with_the_current_interpreter():
    files = _recorded()
    histories = [WorkflowHistory.from_json(_workflow_id(f), f.read_text(encoding="utf-8")) for f in files]
    assert {f.stem for f in files} >= {"dataflow", "dataflow-mirrored", "cancelled", "control-signals",
                                       "control-policies", "control-cleanup", "scaled-run1", "scaled-run2",
                                       "scaled-local-run2"}
    result = await Replayer(workflows=[FFLWorkflow]).replay_workflows(_aiter(histories),
                                                                       raise_on_replay_failure=False)
    assert {wid: str(err) for wid, err in result.replay_failures.items()} == {}


async def test_the_control_patch_guards_runs_started_before_it(monkeypatch):
    """A cancelled run of 0.2.0.dev0 replays only because durable control stays off for it: forced on, the
    cancellation that now waits for its handler and records the steps diverges from the recorded history."""
    from interpreter.workflows.features import CONTROL_PATCH

    path = HISTORIES / "0.2.0.dev0" / "cancelled.json"
    failures = await _failures_with_patch_forced(monkeypatch, CONTROL_PATCH, path, "guard")
    assert len(failures) == 1 and "Nondeterminism" in failures[0], "without the patch the old history would not replay"


async def test_the_child_ids_patch_guards_runs_started_before_it(monkeypatch):
    """A parent of 0.2.0.dev2 replays only because its children keep their old ids: with the patch forced on, the
    child it starts has another id than the recorded one."""
    from interpreter.workflows.features import CHILD_RUN_IDS_PATCH

    path = HISTORIES / "0.2.0.dev2" / "scaled-run2.json"
    failures = await _failures_with_patch_forced(monkeypatch, CHILD_RUN_IDS_PATCH, path, _workflow_id(path))
    assert len(failures) == 1 and "Nondeterminism" in failures[0], "without the patch the old history would not replay"


async def test_the_snapshot_patch_guards_runs_started_before_it(monkeypatch):
    """A chain of local activities of 0.2.0.dev3 replays only because it keeps counting a local activity as one
    event: with the snapshot patch forced on, the run holds at another point than the recorded one."""
    from interpreter.workflows.features import SNAPSHOT_PATCH

    path = HISTORIES / "0.2.0.dev3" / "scaled-local-run1.json"
    failures = await _failures_with_patch_forced(monkeypatch, SNAPSHOT_PATCH, path, _workflow_id(path))
    assert len(failures) == 1 and "Nondeterminism" in failures[0], "without the patch the old history would not replay"


async def test_a_handler_steps_arguments_and_headers_are_not_part_of_replay():
    """Releases up to 0.2.0.dev3 sent a child's logical run in its handlers' arguments (``_ffl_run``), later ones in
    the ``ffl-run`` header (activities/run_header.py): a history with either replays, as Temporal compares an
    activity's type and id, not its input or headers. So the change needs no patch."""
    import base64

    from temporalio.worker import UnsandboxedWorkflowRunner

    path = HISTORIES / "0.2.0.dev3" / "dataflow.json"
    recorded = json.loads(path.read_text(encoding="utf-8"))
    changed = 0
    for event in recorded["events"]:
        scheduled = event.get("activityTaskScheduledEventAttributes")
        if scheduled and not scheduled["activityType"]["name"].startswith("ffl."):
            payload = scheduled["input"]["payloads"][0]
            args = json.loads(base64.b64decode(payload["data"]))
            payload["data"] = base64.b64encode(json.dumps({**args, "_ffl_run": ["root", "run"]}).encode()).decode()
            scheduled["header"] = {"fields": {"ffl-run": {"metadata": payload["metadata"],
                                                          "data": base64.b64encode(b'["root","run"]').decode()}}}
            changed += 1
    assert changed >= 3
    history = WorkflowHistory.from_json(_workflow_id(path), json.dumps(recorded))
    result = await Replayer(workflows=[FFLWorkflow], workflow_runner=UnsandboxedWorkflowRunner()).replay_workflows(
        _aiter([history]), raise_on_replay_failure=False)
    assert {wid: str(err) for wid, err in result.replay_failures.items()} == {}


async def test_the_short_tasks_patch_guards_runs_started_before_it(monkeypatch):
    """A chain of local activities of 0.2.0.dev4 replays only because it keeps weighing a local activity as six
    events: with the short-tasks patch forced on (fourteen), the run holds earlier than the recorded one did."""
    from interpreter.workflows.features import SHORT_TASKS_PATCH

    path = HISTORIES / "0.2.0.dev4" / "scaled-local-run1.json"
    failures = await _failures_with_patch_forced(monkeypatch, SHORT_TASKS_PATCH, path, _workflow_id(path))
    assert len(failures) == 1 and "Nondeterminism" in failures[0], "without the patch the old history would not replay"


async def test_the_local_load_patch_guards_runs_started_before_it(monkeypatch):
    """A run of 0.2.0.dev5 replays only because it still loads its program as an activity: with the local-load
    patch forced on, the run would load it as a local activity, which its history does not record."""
    from interpreter.workflows.features import LOCAL_LOAD_PATCH

    path = HISTORIES / "0.2.0.dev5" / "dataflow.json"
    failures = await _failures_with_patch_forced(monkeypatch, LOCAL_LOAD_PATCH, path, _workflow_id(path))
    assert len(failures) == 1 and "Nondeterminism" in failures[0], "without the patch the old history would not replay"


def test_a_run_since_local_load_records_one_patch_marker_and_no_load_activity():
    """0.2.0.dev6 histories: the program's load is a local activity (a marker, not an activity task) and the
    run's one patch marker is the newest patch, where earlier releases recorded one per release."""
    import base64

    from interpreter.program.constants import LOAD_PROGRAM_ACTIVITY
    from interpreter.workflows.features import LOCAL_LOAD_PATCH

    events = json.loads((HISTORIES / "0.2.0.dev6" / "dataflow.json").read_text(encoding="utf-8"))["events"]
    markers = [e["markerRecordedEventAttributes"] for e in events if "markerRecordedEventAttributes" in e]
    patches = [json.loads(base64.b64decode(m["details"]["patch-data"]["payloads"][0]["data"]))["id"]
               for m in markers if m["markerName"] == "core_patch"]
    local = [json.loads(base64.b64decode(m["details"]["data"]["payloads"][0]["data"]))["activity_type"]
             for m in markers if m["markerName"] == "core_local_activity"]
    scheduled = [e["activityTaskScheduledEventAttributes"]["activityType"]["name"]
                 for e in events if "activityTaskScheduledEventAttributes" in e]
    assert patches == [LOCAL_LOAD_PATCH]
    assert local[0] == LOAD_PROGRAM_ACTIVITY and LOAD_PROGRAM_ACTIVITY not in scheduled


async def test_the_brief_tasks_patch_guards_runs_started_before_it(monkeypatch):
    """A chain of local activities of 0.2.0.dev6 replays only because it keeps weighing a local activity as
    fourteen events: with the brief-tasks patch forced on (twenty), the run holds earlier than the recorded one did."""
    from interpreter.workflows.features import BRIEF_TASKS_PATCH

    path = HISTORIES / "0.2.0.dev6" / "scaled-local-run1.json"
    failures = await _failures_with_patch_forced(monkeypatch, BRIEF_TASKS_PATCH, path, _workflow_id(path))
    assert len(failures) == 1 and "Nondeterminism" in failures[0], "without the patch the old history would not replay"


def test_a_run_whose_load_was_slow_ends_its_first_task_with_it_and_parses_the_program_in_the_next():
    """0.2.0.dev7's settled history (recorded with the slow-load bound at zero): the first task holds the
    patch marker, LoadProgram's marker and the tick that ends it; the second starts no step, only the tick
    that ends it too."""
    from interpreter.program.constants import LOAD_PROGRAM_ACTIVITY, TICK_ACTIVITY
    from interpreter.workflows.features import BRIEF_TASKS_PATCH

    history = WorkflowHistory.from_json("settled", (HISTORIES / "0.2.0.dev7" / "dataflow-settled.json").read_text(
        encoding="utf-8"))
    tasks = task_commands(history)
    assert tasks[0] == [f"patch {BRIEF_TASKS_PATCH}", "local " + LOAD_PROGRAM_ACTIVITY,
                        f"{TICK_ACTIVITY} load-program/settle"]
    assert tasks[1] == [f"{TICK_ACTIVITY} turn/1"]
    assert any(command.startswith("local ") for command in tasks[2])
