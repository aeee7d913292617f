"""A child workflow of a newer release's run, met by this release's worker: it waits for an upgrade, lost never.

In a rolling upgrade a parent started by a newer release may start a child
(a chunk of its foreach) that an older worker takes. The older worker cannot
know what the newer level asks for; the child's workflow task fails with a
message that says so (and is retried), and the child stays running, so a
worker of the newer release finishes it. It must not fail the child, and
through it the parent's foreach.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.worker import Worker

from interpreter.program.constants import CHUNK_WORKFLOW
from interpreter.workflows import FFLWorkflow, workflow_runner
from interpreter.workflows.chunks import ChunkRequest
from interpreter.workflows.features import Level, NewerRun, known_level

NEWER = int(max(Level)) + 1


def test_a_level_this_release_does_not_know_is_refused_by_name():
    known_level(int(max(Level)))  # the newest level it knows passes
    with pytest.raises(NewerRun, match=rf"level {NEWER}; this worker runs up to level {NEWER - 1}"):
        known_level(NEWER)


@workflow.defn(name="tests.NewerParent", sandboxed=False)
class NewerParent:
    """A parent as a newer release would start its child: a request of a level above this release's."""

    @workflow.run
    async def run(self) -> None:
        info = workflow.info()
        request = ChunkRequest(workflow="w.W", program_hash="0" * 64, config={}, root_id=info.workflow_id,
                               root_run=info.run_id, block="b0", path="", owner=None, script_target="", depth=0,
                               params={}, outer=[], items=[1], first=0, level=NEWER, parent_run=info.run_id)
        await workflow.execute_child_workflow(CHUNK_WORKFLOW, request, id=f"{info.workflow_id}/child",
                                              execution_timeout=timedelta(minutes=5))


@pytest.mark.slow
async def test_a_child_of_a_newer_release_waits_for_a_worker_that_knows_it(temporal_client):
    queue = f"newer-{uuid.uuid4().hex[:8]}"
    parent_id = f"newer-parent-{uuid.uuid4().hex[:8]}"
    async with Worker(temporal_client, task_queue=queue, workflows=[FFLWorkflow, NewerParent],
                      workflow_runner=workflow_runner()):
        parent = await temporal_client.start_workflow(NewerParent.run, id=parent_id, task_queue=queue)
        child = temporal_client.get_workflow_handle(f"{parent_id}/child")
        failures: list[str] = []
        for _ in range(100):  # the first failed task comes within moments; its retries follow
            await asyncio.sleep(0.2)
            try:
                events = [e async for e in child.fetch_history_events()]
            except Exception:  # not started yet
                continue
            failures = [e.workflow_task_failed_event_attributes.failure.message for e in events
                        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED]
            if failures:
                break
        assert failures, "the child's workflow task fails instead of running a level it does not know"
        assert "newer release of the FFL interpreter" in failures[0] and "upgrade this worker" in failures[0]
        assert (await child.describe()).status == WorkflowExecutionStatus.RUNNING, "the child waits, not failed"
        assert (await parent.describe()).status == WorkflowExecutionStatus.RUNNING
        await parent.terminate("test over")
