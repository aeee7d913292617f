"""Recovering pipelines from Python: resume a closed run that did not complete (``ffl resume`` calls this).

    from interpreter.operations import resume
    started = await resume(client, "import-africa")               # the run's last run
    started = await resume(client, "import-africa", again=["b0/clean"])   # and rerun a step
    report = await check(client, "import-africa", new_program)    # what a corrected program would rerun
    started = await resume(client, "import-africa", program_hash=published)   # go on with it

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
from datetime import timedelta
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecutionStatus, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from .cli.run_view import pinned_program
from .compatibility import Report, compatibility
from .program.constants import CHUNK_WORKFLOW, MEMO_RESUME, MIGRATE_UPDATE, RECOVERY_QUERY
from .program.model import Program
from .program.serialize import content_hash

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


async def results_of(client: Client, workflow_id: str,
                     run_id: str) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """A run's recovery answer (as a resumed run will read it), every completed result by step path and the
    paths of calls in flight, its children's included — for the compatibility report only: a resumed or
    moved run reads its own."""
    answer = await client.get_workflow_handle(workflow_id, run_id=run_id).query(RECOVERY_QUERY)
    results: dict[str, Any] = {}
    in_flight: list[str] = []
    pending = [answer]
    while pending:
        current = pending.pop()
        in_flight += current.get("in_flight") or []
        chunks = []
        for key, entry in current["memo"].items():
            if isinstance(entry, dict) and ("r" in entry or "e" in entry):
                results[key] = entry
            else:
                chunks.append(key)
        children = dict(current.get("resolved") or {})
        for key, child in (current.get("children") or {}).items():
            try:
                children[key] = [child, (await client.get_workflow_handle(child).describe()).run_id]
            except RPCError as err:
                if err.status != RPCStatusCode.NOT_FOUND:
                    raise
        for child, child_run in children.values():
            pending.append(await client.get_workflow_handle(child, run_id=child_run).query(RECOVERY_QUERY))
    return answer, results, in_flight


async def check(client: Client, workflow_id: str, program: Program | None = None, *, run_id: str | None = None,
                again: Sequence[str] = (), program_hash: str = "", old_program: Program | None = None) -> Report:
    """The compatibility report of resuming ``workflow_id`` with ``program`` (default: its own): per step,
    whether its result carries over, runs again and why, or is new (interpreter/compatibility.py). Nothing is
    started."""
    description, _ = await resumable(client, workflow_id, run_id)
    answer, results, _ = await results_of(client, workflow_id, description.run_id)
    if old_program is None:
        handle = client.get_workflow_handle(workflow_id, run_id=description.run_id)
        old_program, _ = await pinned_program(client, handle)
        if old_program is None:
            raise RecoveryError(f"run {description.run_id} of {workflow_id} has no pinned program in its history")
    if program is None:  # resuming with the run's own program
        program, program_hash = old_program, answer["program_hash"]
    other = (program_hash or content_hash(program)) != answer["program_hash"]
    return await compatibility(old_program, program, description.workflow_type, answer["inputs"] or {}, results,
                               tuple(again), other_program=other)


async def resume(client: Client, workflow_id: str, *, run_id: str | None = None,
                 again: Sequence[str] = (), program_hash: str = "") -> Resumed:
    """Start the resumed run of ``workflow_id`` (its last run, or ``run_id``): its completed steps keep their
    results, failed, cancelled and unrun steps run, and so do the steps at or under each path of ``again``.
    With ``program_hash`` (a program published where the workers load programs) the run goes on with that
    program, keeping only the results ``check`` says carry over."""
    description, state = await resumable(client, workflow_id, run_id)
    if again:  # a path nothing ran at is a typo: said, not ignored
        _, results, _ = await results_of(client, workflow_id, description.run_id)
        unknown = [path for path in again if not any(key == path or key.startswith(path + "/") for key in results)]
        if unknown:
            raise RecoveryError(f"--from {unknown[0]}: no step completed at or under this path in run "
                                f"{description.run_id} (ffl status {workflow_id} --json lists the paths)")
    inputs = await first_input(client, workflow_id, description.run_id)
    marker = {"run": description.run_id, "from": list(again)}
    if program_hash:
        marker["program"] = program_hash
    handle = await client.start_workflow(
        description.workflow_type, inputs, id=workflow_id, task_queue=description.task_queue,
        memo={MEMO_RESUME: marker})
    return Resumed(workflow_id, handle.result_run_id or "", description.workflow_type, description.run_id, state)


@dataclass(frozen=True)
class Migration:
    """What became of one run: ``moved`` (it moves at its next safe point), else ``reason``; its report."""

    workflow_id: str
    run_id: str
    moved: bool
    reason: str = ""
    report: Report | None = None


async def open_runs(client: Client, workflow: str) -> list[str]:
    """The workflow ids of every running run of ``workflow`` (Temporal's visibility list)."""
    query = f"WorkflowType = '{workflow}' AND ExecutionStatus = 'Running'"
    return [execution.id async for execution in client.list_workflows(query)]


async def migrate_one(client: Client, workflow_id: str, program: Program, program_hash: str, *,
                      dry_run: bool = False) -> Migration:
    """Check one running run against ``program``; without conflicts (and unless ``dry_run``) ask it to move."""
    handle = client.get_workflow_handle(workflow_id)
    try:
        description = await handle.describe()
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return Migration(workflow_id, "", False, "no such run")
        raise
    if description.status != WorkflowExecutionStatus.RUNNING:
        state = CLOSED_STATES.get(description.status, "closed") if description.status is not None else "closed"
        return Migration(workflow_id, description.run_id, False, f"not running ({state}): ffl resume goes on with a "
                         "closed run")
    answer, results, in_flight = await results_of(client, workflow_id, description.run_id)
    if answer["program_hash"] == program_hash:
        return Migration(workflow_id, description.run_id, False, f"already runs program {program_hash}")
    old_program, _ = await pinned_program(client, client.get_workflow_handle(workflow_id, run_id=description.run_id))
    if old_program is None:
        return Migration(workflow_id, description.run_id, False, "its pinned program is not in its history")
    report = await compatibility(old_program, program, description.workflow_type, answer["inputs"] or {}, results,
                                 in_flight=in_flight)
    if report.conflicts:
        count = len(report.conflicts)
        return Migration(workflow_id, description.run_id, False, f"left as it is: {count} "
                         f"{'step' if count == 1 else 'steps'} of its work would not carry over", report)
    if dry_run:
        return Migration(workflow_id, description.run_id, False, "movable (dry run: not moved)", report)
    try:
        await handle.execute_update(MIGRATE_UPDATE, program_hash, rpc_timeout=timedelta(seconds=30))
    except WorkflowUpdateFailedError as err:
        cause = getattr(err.cause, "message", None) or str(err.cause or err)
        return Migration(workflow_id, description.run_id, False, f"refused by the run: {cause}", report)
    return Migration(workflow_id, description.run_id, True, "moves at its next safe point", report)


async def migrate(client: Client, workflow_ids: Sequence[str], program: Program, program_hash: str, *,
                  dry_run: bool = False) -> list[Migration]:
    """Move each running run onto ``program`` (published as ``program_hash`` where the workers load programs)
    at its next safe point — what is in flight finishes first, so no handler is called twice — unless its
    completed or in-flight work would not carry over: such a run is left untouched, its report says why."""
    return [await migrate_one(client, workflow_id, program, program_hash, dry_run=dry_run)
            for workflow_id in workflow_ids]
