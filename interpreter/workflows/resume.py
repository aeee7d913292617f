"""Resuming a closed run: the new run reads its predecessor's completed results from Temporal, never from a client.

``ffl resume`` starts a new run under the closed run's workflow id with one
memo entry, ``ffl_resume`` = ``{"run": <closed run id>, "from": [paths]}``.
That entry names a run; it carries no result. The new run asks the
``ffl.Recover`` activity (activities/recovery.py), which uses the worker's own
Temporal client to query the named run of *this* workflow id — Temporal
answers a query on a closed run by replaying its history on a worker — for
its memo, inputs, pinned program and configuration. So what a resumed run
believes completed is what the interpreter itself recorded in that history:
a client can choose which closed run of its workflow id to resume, exactly
as it could rerun it, but cannot hand a run a result. The recovered state
becomes a ``Continuation`` the workflow built itself (trust.py's check of a
*client's* second argument does not apply: there is none).

Failed steps and failed children are dropped from the memo (they run again),
and so is every step at or under a ``from`` path. A child that failed, or
was cancelled with its parent, is recovered the same way: the resumed parent
passes it [workflow id, run id] of the closed child, which the parent's
recovery found, and the new child queries that run for its own completed
iterations.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import CHUNK_WORKFLOW, MEMO_RESUME, RECOVER_ACTIVITY

from .boundaries import activity_failure
from .continuation import Scale
from .memo import Continuation, is_chunk
from .resumed import ResumeMarker, check_recovered_child, resume_marker, resumed_chunk, resumed_run
from .session import Session
from .tracker import Tracker
from .trust import child_id
from .trust_checks import refused


def marker() -> ResumeMarker | None:
    """The run's ``ffl_resume`` memo entry, checked; None for a run that resumes nothing."""
    try:
        value = workflow.memo_value(MEMO_RESUME, None)
    except Exception as err:  # an undecodable memo value: the starter's mistake, said at once
        raise refused(f"memo '{MEMO_RESUME}' cannot be decoded: {type(err).__name__}: {err}"[:2000],
                      "InvalidResume") from None
    return resume_marker(value, workflow.info().run_id)


async def recovered(workflow_id: str, run_id: str, workflow_type: str) -> dict[str, Any]:
    """The closed run's recovery answer (its memo, inputs, program hash, configuration, children to recover)."""
    try:
        return await workflow.execute_activity(
            RECOVER_ACTIVITY, {"workflow_id": workflow_id, "run_id": run_id, "workflow_type": workflow_type},
            activity_id=f"recover/{run_id}", summary=f"FFL machinery: reads what run {run_id} completed",
            task_queue=workflow.info().task_queue, start_to_close_timeout=timedelta(minutes=5),
            retry_policy=RetryPolicy(maximum_attempts=5, non_retryable_error_types=["NotResumable"]))
    except ActivityError as err:
        message, error_type = activity_failure(err)
        raise refused(f"cannot resume run {run_id} of {workflow_id}: {message}", error_type) from None


async def resume_run(resume: ResumeMarker, name: str) -> tuple[Continuation, Any]:
    """The Continuation a resumed run starts from, and the inputs of the run it resumes."""
    info = workflow.info()
    answer = await recovered(info.workflow_id, resume.run, name)
    return resumed_run(answer, resume), answer["inputs"]


async def resume_chunk(recover: list[str], again: list[str], root_id: str, seq: int, root_run: str,
                       program_hash: str, config: dict[str, Any]) -> Continuation:
    """A child of a resumed run: the completed iterations of the closed child its parent names."""
    check_recovered_child(recover, root_id)
    answer = await recovered(recover[0], recover[1], CHUNK_WORKFLOW)
    return resumed_chunk(answer, again, seq, root_run, program_hash, config)


def recovery_answer(session: Session, tracker: Tracker, scale: Scale | None, inputs: Any,
                    signals: dict[str, Any] | None) -> dict[str, Any]:
    """The recovery query's answer: the memo (empty for a run of a release before SCALE, which kept none: all of
    it runs again), and the children whose iterations a resumed run recovers — by workflow id (``children``,
    the recovery activity finds their last run) or already as [workflow id, run id] (``resolved``)."""
    memo = scale.memo.carried() if scale is not None else {}
    children: dict[str, str] = {}
    resolved: dict[str, list[str]] = {}
    if scale is not None:
        for key, entry in memo.items():  # every child: a completed one runs again when its request changed
            if is_chunk(entry):
                children[key] = child_id(session.workflow_id, session.run_id, key, session.level)
        for key, started in scale.started.items():
            if key not in memo:  # cancelled or terminated with its parent
                children[key] = started
        for key, pair in scale.recovered_children.items():
            if key not in memo and key not in children:  # never reached by this run: its predecessor's child
                resolved[key] = pair
    runs = scale.continued.runs if scale is not None and scale.continued is not None else 1
    snapshot = scale.snapshot if scale is not None else None
    earlier = None
    if snapshot is not None:  # what a plain resume restores unrecorded: its completed steps, counted
        earlier = tracker.carried_counts([key for key in memo if not snapshot.covers(key)])
        earlier = {state: number for state, number in earlier.items() if state in ("completed", "caught")}
    return {"memo": memo, "inputs": inputs, "program_hash": session.program_hash, "run_id": session.run_id,
            "config": session.config.model_dump(mode="json"), "seq": tracker.seq, "runs": runs, "signals": signals,
            "snapshot": snapshot.carried() if snapshot is not None else None, "earlier": earlier,
            "children": children, "resolved": resolved, "workflow_id": session.workflow_id,
            "in_flight": sorted(scale.running) if scale is not None else []}
