"""The benchmarks' task figures: local activities counted per workflow task, the workflow's own work timed in replay."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from benchmarks.history_figures import LOCAL_ACTIVITY_MARKER, task_durations, task_spans
from benchmarks.task_work import TimedRunner
from interpreter.workflows import FFLWorkflow

HISTORY = Path(__file__).resolve().parent / "histories" / "0.2.0.dev6" / "dataflow.json"


def _history() -> WorkflowHistory:
    return WorkflowHistory.from_json("task-work", HISTORY.read_text(encoding="utf-8"))


def test_each_task_counts_the_local_activities_it_recorded():
    history = _history()
    spans = task_spans(history)
    markers = sum(1 for e in history.events if e.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER)
    assert markers >= 1  # LoadProgram, a local activity of the first task since 0.2.0.dev6
    assert spans[0][1] >= 1, "the first task pins the program with a local activity"
    assert sum(count for _, count in spans) == markers
    assert task_durations(history) == [seconds for seconds, _ in spans]


async def test_the_timed_runner_adds_up_each_tasks_activations():
    runner = TimedRunner()
    outcome = await Replayer(workflows=[FFLWorkflow], workflow_runner=runner).replay_workflow(
        _history(), raise_on_replay_failure=False)
    assert outcome.replay_failure is None
    tasks = len(task_spans(_history()))
    assert tasks <= len(runner.seconds) <= tasks + 1, "an entry per workflow task (and the replay's last activation)"
    assert 0 < runner.longest_activation <= runner.longest_task <= sum(runner.seconds.values())
