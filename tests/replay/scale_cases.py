"""Runs of the scale patch for the release recorder: a foreach in child workflows while the parent continues
as new, and a chain of local activities that continues as new. Each returns every history it made: every run
of the logical run, then every child."""

from __future__ import annotations

from pathlib import Path

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from interpreter.program.config import RuntimeConfig
from tests.runtime.harness import FAST_RETRY, run_ffl


def scaled_source(chain: int) -> str:
    """A chain of ``chain`` steps, then a foreach with a timer in its body, then one more step."""
    steps = "".join(f"        s{i} = Inc(x = s{i - 1}.y)\n" for i in range(1, chain))
    return ("namespace rec {\n    event facet Inc(x: Long) => (y: Long)\n"
            "    workflow Scaled(items: Json) => (out: Json, last: Long) andThen {\n        s0 = Inc(x = 0)\n"
            + steps +
            f"        all = Inc(x = s{chain - 1}.y) andThen foreach n in $.items {{\n"
            "            g = Inc(x = $.n)\n            nap = ffl.Sleep(seconds = 0.1)\n"
            "            yield Scaled(out = [g.y])\n        }\n"
            "        e = Inc(x = all.y)\n        yield Scaled(last = e.y)\n    }\n}\n")


def _inc(payload: dict) -> dict:
    return {"y": payload["x"] + 1}


async def _runs(client: Client, workflow_id: str) -> list[WorkflowHistory]:
    """Every run of a logical run, first to last: each run's start names the run it continued."""
    histories = [await client.get_workflow_handle(workflow_id).fetch_history()]
    while True:
        started = histories[0].events[0].workflow_execution_started_event_attributes
        if not started.continued_execution_run_id:
            return histories
        previous = client.get_workflow_handle(workflow_id, run_id=started.continued_execution_run_id)
        histories.insert(0, await previous.fetch_history())


async def _histories(client: Client, workflow_id: str) -> list[tuple[str, WorkflowHistory]]:
    found: list[tuple[str, WorkflowHistory]] = []
    for number, history in enumerate(await _runs(client, workflow_id), start=1):
        found.append((f"run{number}", history))
        for event in history.events:
            if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
                child = event.start_child_workflow_execution_initiated_event_attributes.workflow_id
                found.append((f"child{len(found)}", await client.get_workflow_handle(child).fetch_history()))
    return found


async def record_scaled(client: Client, tmp_path: Path, *, local: bool) -> list[tuple[str, WorkflowHistory]]:
    config = RuntimeConfig(retry=FAST_RETRY, continue_after_events=100, child_threshold=4, iterations_per_child=4,
                           children_in_flight=2)
    # Local activities add one marker each to history, not six events: the chain is longer to continue as new.
    run = await run_ffl(client, scaled_source(90 if local else 20), "rec.Scaled", {"items": list(range(10))}, handlers={"rec.Inc": _inc},
                        tmp_path=tmp_path, config=config, timeout=120, local=local)
    if run.error is not None:
        raise RuntimeError(f"the scaled run to record failed: {run.message}")
    histories = await _histories(client, run.handle.id)
    if sum(name.startswith("run") for name, _ in histories) < 2:
        raise RuntimeError("the scaled run to record did not continue as new")
    return histories
