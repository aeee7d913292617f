"""ffl.Recover: what a closed run completed, read from Temporal with the worker's own client (workflows/resume.py).

The workflow names the run (its own workflow id, or a child's of its own run);
this activity checks the run is closed without having completed and is of the
expected workflow type, then queries it: Temporal answers a query on a closed
run by replaying its history on a worker, so the answer is what the
interpreter recorded, never what a client says. Children whose iterations the
resumed run will recover are resolved to their last run, which must be closed.
"""

from __future__ import annotations

from typing import Any

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowQueryFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from ..program.constants import CHUNK_WORKFLOW, RECOVER_ACTIVITY, RECOVERY_QUERY

NOT_RESUMABLE = {WorkflowExecutionStatus.RUNNING: "still running (ffl migrate moves a running run)",
                 WorkflowExecutionStatus.COMPLETED: "completed: there is nothing to resume",
                 WorkflowExecutionStatus.CONTINUED_AS_NEW: "continued as new: resume its last run"}


def not_resumable(message: str) -> ApplicationError:
    return ApplicationError(message, type="NotResumable", non_retryable=True)


@activity.defn(name=RECOVER_ACTIVITY)
async def recover(request: dict[str, Any]) -> dict[str, Any]:
    """``{"workflow_id", "run_id", "workflow_type"}`` → the run's recovery answer, children resolved to run ids."""
    client = activity.client()
    workflow_id, run_id = request["workflow_id"], request["run_id"]
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    try:
        description = await handle.describe()
    except Exception as err:  # noqa: BLE001 - no such run (NOT_FOUND) or the server is away: retried, then said
        raise ApplicationError(f"run {run_id} of {workflow_id} cannot be described: {err}",
                               type="NotResumable") from None
    if description.workflow_type != request["workflow_type"]:
        raise not_resumable(f"run {run_id} of {workflow_id} is a {description.workflow_type}, not a "
                            f"{request['workflow_type']}")
    reason = NOT_RESUMABLE.get(description.status) if description.status is not None else "of unknown state"
    if request["workflow_type"] == CHUNK_WORKFLOW and description.status == WorkflowExecutionStatus.COMPLETED:
        reason = None  # a child completes with the failure that stopped its iterations
    if reason is not None:
        raise not_resumable(f"run {run_id} of {workflow_id} is {reason}")
    try:
        answer = await handle.query(RECOVERY_QUERY)
    except WorkflowQueryFailedError as err:
        raise not_resumable(f"run {run_id} of {workflow_id} cannot say what it completed: {err}") from None
    children: dict[str, list[str]] = dict(answer.get("resolved") or {})
    for key, child in (answer.get("children") or {}).items():
        try:
            last = await client.get_workflow_handle(child).describe()
        except RPCError as err:
            if err.status == RPCStatusCode.NOT_FOUND:  # never started: its iterations simply run
                continue
            raise
        if last.status == WorkflowExecutionStatus.RUNNING:  # still closing after its parent: retried
            raise ApplicationError(f"child {child} of run {run_id} is still closing", type="ChildClosing")
        children[key] = [child, last.run_id]
    answer["children"] = children
    return answer
