"""The mirror's records: what a run and its handlers report, one typed record per kind, as the writer reads it.

The workflow's tracker (interpreter/workflows/records.py) emits runner,
step, task and log records; the outbox sends them in batches (one Mirror
activity input, recorded in history); the handler side's listener emits
task and task_log records, a worker its server record; the mirror's writer
(interpreter/activities/mirror/documents.py) turns each into documents
(docs/mirror.md). A record is a ``TypedDict``: typed where it is built and
read, and on the wire exactly the JSON object it always was — so a batch
an older run sent, or a spool an older writer left, reads as one of these,
and a batch's size (which decides how many Mirror activities a run
schedules, part of its history) is what it always was.

Times: a workflow record's ``time`` is ISO text of workflow time; a handler
record's, milliseconds. ``seq`` numbers a run's workflow records in emission
order (the mirror's deterministic log order; 0.1.0 sent none, and the
writer orders its records by time); handler records carry
``index`` within their attempt instead. (No ``from __future__ import
annotations`` here: a TypedDict reads ``NotRequired`` from live annotations.)
"""

from typing import Any, Literal, NotRequired, TypedDict


class RunnerRecord(TypedDict):
    """The run's state (created, running, completed, failed, cancelled), with its inputs and returns."""

    kind: Literal["runner"]
    workflow_id: str
    run_id: str
    workflow: str  # the FFL workflow's qualified name
    state: str
    params: dict[str, Any] | None
    returns: dict[str, Any] | None
    error: str | None
    program_hash: str
    time: str
    seq: int


class StepRecord(TypedDict):
    """A step's state, or a block's or a yield's (``object_type`` says which), placed in the run's tree."""

    kind: Literal["step"]
    workflow_id: str
    run_id: str
    path: str
    statement_id: str
    facet: str
    object_type: str
    parent_path: str | None  # the enclosing step
    block_path: str  # the enclosing mirrored block ("" at the top)
    root_path: str
    state: str
    params: dict[str, Any] | None
    returns: dict[str, Any] | None
    error: str | None
    program_hash: str
    time: str
    foreach: NotRequired[list[Any]]  # an iteration block's [variable, element]
    seq: int


class ScheduledTaskRecord(TypedDict):
    """The workflow scheduled a handler's activity: its task is ``pending``, with the step's arguments."""

    kind: Literal["task"]
    workflow_id: str
    run_id: str
    activity_id: str  # the step's path
    facet: str
    queue: str
    attempt: int
    state: Literal["pending"]
    params: NotRequired[dict[str, Any] | None]  # 0.1.0 sent none
    program_hash: str
    time: str
    seq: int


class LogRecord(TypedDict):
    """A line of the run's own log (a step's, or the run's where ``path`` is empty)."""

    kind: Literal["log"]
    workflow_id: str
    run_id: str
    path: str
    message: str
    time: str
    seq: int


class TaskRecord(TypedDict):
    """A handler's attempt as its worker saw it (running, completed, failed, canceled), or its progress."""

    kind: Literal["task"]
    workflow_id: str
    run_id: str
    activity_id: str
    facet: str
    queue: str
    attempt: int
    state: str
    payload: NotRequired[dict[str, Any] | None]
    returns: NotRequired[dict[str, Any] | None]
    error: NotRequired[str | None]
    error_type: NotRequired[str | None]
    progress_pct: NotRequired[Any]
    progress_message: NotRequired[str | None]
    task_token: NotRequired[str]
    heartbeat: NotRequired[int | None]
    time: int | None
    server_id: str
    index: int


class TaskLogRecord(TypedDict):
    """A line a handler wrote with ``_step_log``."""

    kind: Literal["task_log"]
    workflow_id: str
    run_id: str
    activity_id: str
    facet: str
    message: str
    level: str
    time: int | None
    server_id: str
    attempt: int
    index: int
    details: NotRequired[dict[str, Any]]


WorkflowRecord = RunnerRecord | StepRecord | ScheduledTaskRecord | LogRecord
"""What a run's outbox carries."""

MirrorRecord = WorkflowRecord | TaskRecord | TaskLogRecord | dict[str, Any]
"""What the writer takes: the run's and its handlers' records, and a worker's server record (servers.py)."""
