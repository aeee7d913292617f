"""Cancelling a run: it ends as cancelled, and the mirror hears so before it ends."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import CancelledError
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.program.config import RuntimeConfig
from interpreter.workflows import FFLWorkflow, workflow_runner

from .harness import FAST_RETRY, compile_text, isolated_config, registry_of
from .test_workflow_runtime import ListSink

SLOW = """
namespace slow {
    event facet Wait(n: Long) => (n: Long)
    workflow Hold(n: Long) => (n: Long) andThen {
        w = Wait(n = $.n)
        yield Hold(n = w.n)
    }
}
"""


async def test_cancelled_run_ends_cancelled_and_mirrors_it(temporal_client, tmp_path):
    started = asyncio.Event()

    async def wait(payload):
        started.set()
        await asyncio.sleep(30)
        return {"n": payload["n"]}

    program = compile_text(SLOW)
    queue = "ffl-" + uuid.uuid4().hex[:10]
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    config = isolated_config(program, queue + "-h", RuntimeConfig(retry=FAST_RETRY, mirror=True))
    sink = ListSink()
    interpreter = Worker(temporal_client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config, sink))
    handlers = Worker(temporal_client, task_queue=queue + "-h",
                      activities=[build_handler_activity(registry_of({"slow.Wait": wait}), queue + "-h")])
    async with interpreter, handlers:
        handle = await temporal_client.start_workflow("slow.Hold", {"n": 1}, id="wf-" + uuid.uuid4().hex[:12],
                                                      task_queue=queue)
        await asyncio.wait_for(started.wait(), 20)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError) as info:
            await asyncio.wait_for(handle.result(), 20)
    assert isinstance(info.value.cause, CancelledError)
    runner_states = [r["state"] for r in sink.records if r["kind"] == "runner"]
    assert runner_states[-1] == "cancelled", runner_states
    assert any(r["kind"] == "log" and r["message"] == "workflow cancelled" for r in sink.records)
