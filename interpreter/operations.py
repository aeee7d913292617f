"""Recovering pipelines from Python: resume a closed run that did not complete (``ffl resume`` calls this).

    from interpreter.operations import resume
    started = await resume(client, "import-africa")               # the run's last run
    started = await resume(client, "import-africa", again=["b0/clean"])   # and rerun a step

The new run has the closed run's workflow id, type, task queue and inputs, and
one memo entry naming the run it resumes (``ffl_resume``): the run itself reads
that run's completed results from Temporal (interpreter/workflows/resume.py),
so nothing here can hand it a result. The client needs the interpreter's data
converter (``interpreter.cli.connect.connect`` gives one) for inputs stored by
reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from .program.constants import CHUNK_WORKFLOW, MEMO_RESUME

CLOSED_STATES = {WorkflowExecutionStatus.FAILED: "failed", WorkflowExecutionStatus.CANCELED: "cancelled",
                 WorkflowExecutionStatus.TERMINATED: "terminated", WorkflowExecutionStatus.TIMED_OUT: "timed out"}


class RecoveryError(Exception):
    """A one-line reason nothing was started (a completed or running run, no such run)."""


@dataclass(frozen=True)
class Resumed:
    """The run started: ``workflow_id``/``run_id``; the one it resumes, ``resumed_run``, and how that ended."""

    workflow_id: str
    run_id: str
    workflow_type: str
    resumed_run: str
    resumed_state: str


async def resumable(client: Client, workflow_id: str, run_id: str | None = None) -> tuple[Any, str]:
    """The run's description and how it ended, or a RecoveryError saying why it cannot be resumed."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        description = await handle.describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            raise RecoveryError(f"no run {workflow_id}" + (f" with run id {run_id}" if run_id else "")) from None
        raise
    if description.workflow_type == CHUNK_WORKFLOW:
        raise RecoveryError(f"{workflow_id} is a child of a run (part of a foreach): resume the run that started "
                            "it, its children are recovered with it")
    status = description.status
    if status == WorkflowExecutionStatus.COMPLETED:
        raise RecoveryError(f"run {workflow_id} ({description.run_id}) completed: there is nothing to resume")
    if status == WorkflowExecutionStatus.RUNNING:
        raise RecoveryError(f"run {workflow_id} ({description.run_id}) is still running: resume a run once it "
                            "has failed, been cancelled, terminated or timed out")
    if status == WorkflowExecutionStatus.CONTINUED_AS_NEW:
        raise RecoveryError(f"run {description.run_id} of {workflow_id} continued as new: resume its last run "
                            "(leave out the run id)")
    state = CLOSED_STATES.get(status) if status is not None else None
    if state is None:
        raise RecoveryError(f"run {workflow_id} is in no state a run can be resumed from ({status})")
    return description, state


async def first_input(client: Client, workflow_id: str, run_id: str) -> Any:
    """The run's first argument (its inputs), as its start event holds it."""
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    async for event in handle.fetch_history_events(page_size=1):
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
            payloads = event.workflow_execution_started_event_attributes.input.payloads
            if not payloads:
                return {}
            values = await client.data_converter.decode([payloads[0]])
            return values[0]
        break
    raise RecoveryError(f"run {run_id} of {workflow_id} has no start event")


async def resume(client: Client, workflow_id: str, *, run_id: str | None = None,
                 again: Sequence[str] = ()) -> Resumed:
    """Start the resumed run of ``workflow_id`` (its last run, or ``run_id``): its completed steps keep their
    results, failed, cancelled and unrun steps run, and so do the steps at or under each path of ``again``."""
    description, state = await resumable(client, workflow_id, run_id)
    inputs = await first_input(client, workflow_id, description.run_id)
    marker = {"run": description.run_id, "from": list(again)}
    handle = await client.start_workflow(
        description.workflow_type, inputs, id=workflow_id, task_queue=description.task_queue,
        memo={MEMO_RESUME: marker})
    return Resumed(workflow_id, handle.result_run_id or "", description.workflow_type, description.run_id, state)
