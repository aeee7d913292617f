"""Determinism: histories of real runs replay without non-determinism errors."""

from __future__ import annotations

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from interpreter.workflows import FFLWorkflow
from tests import conformance_suite as suite

from .harness import run_ffl
from .test_workflow_semantics import FAIL, HANDLERS, SIBLINGS, TAILS, double, score, val


async def _aiter(items):
    for item in items:
        yield item


async def test_conformance_and_semantics_histories_replay(temporal_client, tmp_path):
    runs = []
    for folder in suite.valid_folders():
        case = suite.cases_of(folder)[-1]
        runs.append(await run_ffl(temporal_client, dict(suite.sources(folder)), case.workflow, case.inputs,
                                  handlers=suite.handlers(folder), tmp_path=tmp_path / folder.name))
    runs.append(await run_ffl(temporal_client, SIBLINGS, "t.Sib", handlers={"t.Val": val}, tmp_path=tmp_path / "s"))
    runs.append(await run_ffl(temporal_client, TAILS, "t.Tail", {"n": 1},
                              handlers={"t.Score": score, "t.Double": double}, tmp_path=tmp_path / "t"))
    runs.append(await run_ffl(temporal_client, FAIL, "t.Caught", {"x": 1}, handlers=HANDLERS, tmp_path=tmp_path / "c"))
    failed = await run_ffl(temporal_client, FAIL, "t.Plain", {"x": 1}, handlers=HANDLERS, tmp_path=tmp_path / "f")
    assert failed.error is not None
    runs.append(failed)
    histories = [await run.handle.fetch_history() for run in runs]
    assert all(len(h.events) > 5 for h in histories)
    replayer = Replayer(workflows=[FFLWorkflow])
    results = await replayer.replay_workflows(_aiter(histories), raise_on_replay_failure=False)
    problems = {wid: str(err) for wid, err in results.replay_failures.items()}
    assert problems == {}


async def test_replay_detects_a_changed_program(temporal_client, tmp_path):
    """The check above can fail: a history replayed against other code is reported."""
    run = await run_ffl(temporal_client, TAILS, "t.Tail", {"n": 1},
                        handlers={"t.Score": score, "t.Double": double}, tmp_path=tmp_path)
    history = await run.handle.fetch_history()
    # Rename a scheduled activity in the history: replay must notice the mismatch.
    events = list(history.events)
    renamed = 0
    for event in events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            kind = event.activity_task_scheduled_event_attributes.activity_type
            if kind.name == "t.Double":
                kind.name = "t.Other"
                renamed += 1
    assert renamed == 2
    broken = WorkflowHistory(history.workflow_id, events)
    result = await Replayer(workflows=[FFLWorkflow]).replay_workflows(_aiter([broken]),
                                                                       raise_on_replay_failure=False)
    assert result.replay_failures
