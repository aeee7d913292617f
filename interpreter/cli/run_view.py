"""Everything Temporal knows about one run, gathered for ``ffl status``, progress and the run graph.

One ``RunView`` joins the workflow's description (state, memo, pending
activities with attempt, last failure and last worker), the pollers of each
queue a pending activity waits on, the workflow's ``steps`` query and, for a
closed run, its outcome (returns or failure). Rendering is pure and lives in
``status_view``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.client import WorkflowQueryFailedError

from ..program.constants import (
    INTERPRETER_QUEUE,
    LOAD_PROGRAM_ACTIVITY,
    MEMO_PROGRAM_HASH,
    SIGNALS_QUERY,
    STEPS_QUERY,
    WARNINGS_QUERY,
)
from ..program.queries import MAX_LIMIT, StepsPage, StepsQuery
from .connect import DEFAULT_ADDRESS, DEFAULT_NAMESPACE
from .heartbeats import pending_progress

POLLER_FRESH = timedelta(seconds=150)
"""A poller seen this recently counts as a worker on the queue (idle workers long-poll for about a minute)."""

_FAILED_STEP = re.compile(r"^step '(?P<path>[^']*)' \((?P<facet>[^)]*)\) failed: (?P<type>[^:]+): (?P<cause>.*)$", re.S)

STATUS_NAMES = {
    "RUNNING": "running", "COMPLETED": "completed", "FAILED": "failed", "CANCELED": "cancelled",
    "TERMINATED": "terminated", "TIMED_OUT": "timed out", "CONTINUED_AS_NEW": "continued as new",
}


@dataclass
class Pending:
    """A pending activity of the run: what Temporal says about the step's handler call right now."""

    path: str
    facet: str
    state: str  # scheduled | started | cancel requested
    attempt: int = 1
    maximum_attempts: int = 0  # 0: unlimited
    last_error: str | None = None
    worker: str | None = None
    queue: str | None = None
    pollers: list[str] | None = None  # identities polling ``queue`` lately; None: unknown
    scheduled: datetime | None = None


@dataclass
class Failure:
    """Why a run failed: the failing step and facet when the message names them (it does for step failures)."""

    message: str
    error_type: str = ""
    step: str | None = None
    facet: str | None = None
    cause: str = ""
    within: list[str] = field(default_factory=list)


@dataclass
class RunView:
    workflow: str
    workflow_id: str
    run_id: str
    status: str
    task_queue: str = ""
    started: datetime | None = None
    closed: datetime | None = None
    memo: dict[str, Any] = field(default_factory=dict)
    summary: str | None = None
    steps: list[dict[str, Any]] | None = None
    steps_error: str | None = None
    pending: dict[str, Pending] = field(default_factory=dict)
    interpreter_pollers: list[str] | None = None
    progress: dict[str, dict[str, Any]] = field(default_factory=dict)  # step path → handler's last heartbeat
    children: list[dict[str, Any]] = field(default_factory=list)  # child workflows of large foreach blocks
    finished_children: dict[str, int] = field(default_factory=dict)  # step counts of children that finished
    signals: dict[str, Any] | None = None  # the run's ``signals`` query: received, kept, waiting
    warnings: list[dict[str, str]] = field(default_factory=list)  # the ``warnings`` query: values passed on
    failure: Failure | None = None
    returns: Any = None
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    address: str = DEFAULT_ADDRESS  # where the run was read, for the commands a view suggests
    namespace: str = DEFAULT_NAMESPACE

    def waiting_signal(self, path: str) -> str | None:
        """The signal the step at ``path`` waits for, if it is an ``ffl.WaitForSignal`` waiting."""
        for name, paths in ((self.signals or {}).get("waiting") or {}).items():
            if path in paths:
                return str(name)
        return None

    def signal_command(self, name: str) -> str:
        """The ``ffl signal`` line that answers a wait for ``name`` in this run."""
        line = f"ffl signal {shlex.quote(self.workflow_id)} {shlex.quote(name)} '{{…}}'"
        if self.address != DEFAULT_ADDRESS:
            line += f" --address {self.address}"
        if self.namespace != DEFAULT_NAMESPACE:
            line += f" --namespace {shlex.quote(self.namespace)}"
        return line

    @property
    def closed_run(self) -> bool:
        return self.status != "running"

    @property
    def program_hash(self) -> str:
        return str(self.memo.get(MEMO_PROGRAM_HASH) or "")


def parse_failure(message: str, error_type: str = "") -> Failure:
    """The interpreter's failure message (``step 'p' (facet) failed: Type: cause``) taken apart."""
    first, *rest = message.split("\n")
    within = [line.strip() for line in rest if line.strip().startswith("in step ")]
    match = _FAILED_STEP.match(first)
    if match is None:
        return Failure(message=message, error_type=error_type, cause=message)
    return Failure(message=message, error_type=error_type or match["type"], step=match["path"],
                   facet=match["facet"], cause=match["cause"], within=within)


def failure_from_error(error: BaseException) -> tuple[str | None, Failure | None]:
    """(status override, failure) from what ``handle.result()`` raised for a closed run."""
    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import ApplicationError, CancelledError, TerminatedError, TimeoutError

    cause = error.cause if isinstance(error, WorkflowFailureError) else error
    if isinstance(cause, CancelledError):
        return "cancelled", None
    if isinstance(cause, TerminatedError):
        return "terminated", Failure(message=f"terminated: {cause.message or 'no reason given'}",
                                     error_type="Terminated", cause=cause.message or "")
    if isinstance(cause, TimeoutError):
        return "timed out", Failure(message=f"the run timed out ({cause.type.name if cause.type else 'timeout'})",
                                    error_type="TimeoutError")
    if isinstance(cause, ApplicationError):
        return None, parse_failure(cause.message, cause.type or "")
    text = getattr(cause, "message", None) or str(cause)
    return None, Failure(message=text, error_type=type(cause).__name__, cause=text)


async def queue_pollers(client, queue: str, workflow_queue: bool = False, now: datetime | None = None) -> list[str]:
    """Identities of workers that polled ``queue`` lately (activity pollers, or workflow pollers)."""
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    kind = TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW if workflow_queue else TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY
    response = await client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
        namespace=client.namespace, task_queue=TaskQueue(name=queue), task_queue_type=kind))
    now = now or datetime.now(UTC)
    fresh = []
    for poller in response.pollers:
        seen = poller.last_access_time.ToDatetime(tzinfo=UTC) if poller.HasField("last_access_time") else now
        if now - seen <= POLLER_FRESH:
            fresh.append(poller.identity)
    return sorted(fresh)


def _pending(raw) -> Pending:
    from temporalio.api.enums.v1 import PendingActivityState

    state = PendingActivityState.Name(raw.state).removeprefix("PENDING_ACTIVITY_STATE_").lower().replace("_", " ")
    last_error = None
    if raw.HasField("last_failure"):
        failure = raw.last_failure
        kind = failure.application_failure_info.type if failure.HasField("application_failure_info") else ""
        message = failure.message
        if failure.HasField("cause") and not message:
            message = failure.cause.message
        last_error = f"{kind}: {message}" if kind and kind not in message else message
    queue = raw.activity_options.task_queue.name if raw.HasField("activity_options") else ""
    return Pending(
        path=raw.activity_id, facet=raw.activity_type.name, state=state, attempt=raw.attempt or 1,
        maximum_attempts=raw.maximum_attempts, last_error=last_error, worker=raw.last_worker_identity or None,
        queue=queue or None,
        scheduled=raw.scheduled_time.ToDatetime(tzinfo=UTC) if raw.HasField("scheduled_time") else None,
    )


async def find_handle(client, target: str):
    """The handle of a workflow id, or of the workflow holding run id ``target``."""
    run_id = None
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", target):
        with contextlib.suppress(Exception):  # visibility may lag or be unavailable: then it is a workflow id
            async for found in client.list_workflows(f'RunId = "{target}"', limit=1):
                target, run_id = found.id, found.run_id
    return client.get_workflow_handle(target, run_id=run_id)


async def fetch_view(client, handle, *, query_timeout: float = 10.0, outcome: bool = True) -> RunView:
    """Describe the run, query its steps and, once closed, read its outcome."""
    description = await handle.describe()
    status = STATUS_NAMES.get(description.status.name if description.status else "", "unknown")
    memo = await description.memo()
    raw = description.raw_description
    summary = None
    with contextlib.suppress(Exception):
        summary = await description.static_summary()
    view = RunView(workflow=description.workflow_type, workflow_id=description.id, run_id=description.run_id,
                   status=status, task_queue=description.task_queue, started=description.start_time,
                   closed=description.close_time, memo=memo, summary=summary,
                   address=client.service_client.config.target_host, namespace=client.namespace)
    view.pending = {p.path: p for p in (_pending(item) for item in raw.pending_activities)}
    with contextlib.suppress(Exception):
        view.progress = await pending_progress(description)
    queues = sorted({p.queue for p in view.pending.values() if p.queue})
    polled = await asyncio.gather(*(queue_pollers(client, q, now=view.now) for q in queues), return_exceptions=True)
    by_queue = {q: (None if isinstance(found, BaseException) else found) for q, found in zip(queues, polled, strict=True)}
    for item in view.pending.values():
        item.pollers = by_queue.get(item.queue) if item.queue else None
    try:
        view.steps = await asyncio.wait_for(query_all_steps(handle, client, view), query_timeout)
        with contextlib.suppress(Exception):  # a run of a release before signals has no such query
            view.signals = await asyncio.wait_for(handle.query(SIGNALS_QUERY), query_timeout)
        with contextlib.suppress(Exception):  # nor one before type_checks: warn
            view.warnings = list(await asyncio.wait_for(handle.query(WARNINGS_QUERY), query_timeout) or [])
    except Exception as exc:  # noqa: BLE001 - reported, the rest of the view still helps
        view.steps_error = await _why_no_steps(client, view, exc)
        if view.closed_run:  # the history still tells what each handler call did
            with contextlib.suppress(Exception):
                view.steps = await steps_from_history(handle)
                view.steps_error += "; showing the handler steps recorded in the run's history"
    if view.closed_run and outcome:
        try:
            view.returns = await asyncio.wait_for(handle.result(follow_runs=False), query_timeout)
        except Exception as exc:  # noqa: BLE001 - the failure is what we came for
            override, view.failure = failure_from_error(exc)
            view.status = override or view.status
        if view.status == "terminated":
            with contextlib.suppress(Exception):
                reason = await _termination_reason(handle)
                view.failure = Failure(message=f"terminated: {reason or 'no reason given'}",
                                       error_type="Terminated", cause=reason)
    return view


async def query_all_steps(handle, client=None, view: RunView | None = None) -> list[dict[str, Any]]:
    """Every step record of a run, read page by page (the argument-less query answers the first 1,000 only).

    A run of an interpreter that answers no pages is asked the argument-less way.
    With ``client``, the steps of its running child workflows (large foreach
    blocks) follow, read the same way: one logical run. Children that
    finished are not asked (that would replay each of their histories); their
    step counts, which the parent keeps, go to ``view.finished_children``.
    """
    steps: list[dict[str, Any]] = []
    children: list[dict[str, Any]] = []
    offset: int | None = 0
    while offset is not None:
        try:
            page = await handle.query(STEPS_QUERY, StepsQuery(offset=offset, limit=MAX_LIMIT), result_type=StepsPage)
        except WorkflowQueryFailedError:
            if offset:
                raise
            return await handle.query(STEPS_QUERY)
        steps.extend(page.steps)
        if not offset:
            children = list(page.children or [])
            if view is not None:  # counted like finished children: their records are in earlier runs
                for state, number in (page.earlier or {}).items():
                    view.finished_children[state] = view.finished_children.get(state, 0) + number
        offset = page.next_offset
    if client is None:
        return steps
    if view is not None:
        view.children.extend(children)
    for child in children:
        if child.get("counts") is not None:
            if view is not None:
                for state, number in child["counts"].items():
                    view.finished_children[state] = view.finished_children.get(state, 0) + number
            continue
        with contextlib.suppress(Exception):  # a child just closing, or not started yet
            steps.extend(await query_all_steps(client.get_workflow_handle(child["workflow_id"]), client, view))
    return steps


async def _termination_reason(handle) -> str:
    from temporalio.client import WorkflowHistoryEventFilterType

    async for event in handle.fetch_history_events(event_filter_type=WorkflowHistoryEventFilterType.CLOSE_EVENT):
        if event.HasField("workflow_execution_terminated_event_attributes"):
            return event.workflow_execution_terminated_event_attributes.reason
    return ""


def no_interpreter(queue: str) -> str:
    """Why a run's workflow tasks wait, and the command that serves them (``--interpreter`` off ``ffl``)."""
    if queue == INTERPRETER_QUEUE:
        return f"no interpreter worker polling queue {queue} (start one: python worker.py --task-queue {queue})"
    return (f"no interpreter worker polling queue {queue}, the queue the run was started on; interpreter "
            f"workers poll {INTERPRETER_QUEUE} (start runs with --task-queue {INTERPRETER_QUEUE}), or serve "
            f"this one: python worker.py --task-queue {queue} --interpreter")


async def _why_no_steps(client, view: RunView, error: BaseException) -> str:
    if view.task_queue:
        with contextlib.suppress(Exception):
            view.interpreter_pollers = await queue_pollers(client, view.task_queue, workflow_queue=True, now=view.now)
    if view.interpreter_pollers == []:
        return no_interpreter(view.task_queue)
    if isinstance(error, asyncio.TimeoutError):
        return "the steps query timed out"
    text = getattr(error, "message", None) or str(error)
    return f"the steps query failed: {text.splitlines()[0] if text else type(error).__name__}"


async def steps_from_history(handle, max_events: int = 20_000) -> list[dict[str, Any]]:
    """Event-facet steps as the history records them (activity id = step path), for a run no worker answers."""
    from ..program.constants import LOAD_PROGRAM_ACTIVITY as load
    from ..program.constants import MIRROR_ACTIVITY as mirror

    records: dict[int, dict[str, Any]] = {}
    seen = 0
    async for event in handle.fetch_history_events(page_size=1000):
        seen += 1
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name not in (load, mirror):
                records[event.event_id] = {"path": attrs.activity_id, "facet": attrs.activity_type.name,
                                           "state": "running", "returns": None, "error": None}
        for field_name, state in (("activity_task_completed_event_attributes", "completed"),
                                  ("activity_task_failed_event_attributes", "failed"),
                                  ("activity_task_timed_out_event_attributes", "failed"),
                                  ("activity_task_canceled_event_attributes", "cancelled")):
            if event.HasField(field_name):
                attrs = getattr(event, field_name)
                record = records.get(attrs.scheduled_event_id)
                if record is not None:
                    record["state"] = state
                    if hasattr(attrs, "failure") and attrs.HasField("failure"):
                        record["error"] = attrs.failure.message
        if seen >= max_events:
            break
    return list(records.values())


def local_activity_type(event) -> str | None:
    """The activity type a ``core_local_activity`` marker records (the SDK's own marker: its ``data`` names
    the type, its ``result`` holds the answer), or None for any other event."""
    if not event.HasField("marker_recorded_event_attributes"):
        return None
    attrs = event.marker_recorded_event_attributes
    data = attrs.details.get("data")
    if attrs.marker_name != "core_local_activity" or not data or not data.payloads:
        return None
    try:
        return json.loads(data.payloads[0].data).get("activity_type")
    except (ValueError, AttributeError):
        return None


def loaded_payload(event, scheduled: dict[int, str]):
    """LoadProgram's result payload if ``event`` records it, else None; ``scheduled`` collects activity types.

    A run of 0.2.0.dev5 or older pinned its program as an activity's result; since 0.2.0.dev6 the program
    loads as a local activity, whose result is in its marker (``local_activity_type``)."""
    if event.HasField("activity_task_scheduled_event_attributes"):
        scheduled[event.event_id] = event.activity_task_scheduled_event_attributes.activity_type.name
    elif event.HasField("activity_task_completed_event_attributes"):
        attrs = event.activity_task_completed_event_attributes
        if scheduled.get(attrs.scheduled_event_id) == LOAD_PROGRAM_ACTIVITY and attrs.result.payloads:
            return attrs.result.payloads[0]
    elif local_activity_type(event) == LOAD_PROGRAM_ACTIVITY:
        result = event.marker_recorded_event_attributes.details.get("result")
        if result and result.payloads:
            return result.payloads[0]
    return None


async def pinned_program(client, handle, max_events: int = 500):
    """The program the run pinned in its history (LoadProgram's result), or None when not (yet) there."""
    from ..program.pinned import unpack_program

    scheduled: dict[int, str] = {}
    seen = 0
    async for event in handle.fetch_history_events(page_size=100):
        seen += 1
        payload = loaded_payload(event, scheduled)
        if payload is not None:
            loaded = client.data_converter.payload_converter.from_payload(payload, None)
            return unpack_program(loaded), loaded
        if seen >= max_events:
            break
    return None, None
