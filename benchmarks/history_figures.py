"""Figures read from a workflow's history: task durations and failures, pending activities, buffering.

Shared by the benchmarks and the scale tests; pure functions of a history
(``temporalio.api.history.v1.History`` or the SDK's ``WorkflowHistory``).
"""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause

E = EventType

_ACTIVITY_CLOSED = (E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, E.EVENT_TYPE_ACTIVITY_TASK_FAILED,
                    E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, E.EVENT_TYPE_ACTIVITY_TASK_CANCELED)
LOCAL_ACTIVITY_MARKER = "core_local_activity"
"""The marker the SDK records for each local activity's result."""
_TASK_ENDS = (E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, E.EVENT_TYPE_WORKFLOW_TASK_FAILED,
              E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)


def task_failures(history: Any) -> int:
    """Workflow tasks that failed or timed out (each costs the worker a full replay)."""
    bad = (E.EVENT_TYPE_WORKFLOW_TASK_FAILED, E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT)
    return sum(1 for event in history.events if event.event_type in bad)


def force_closed(history: Any) -> int:
    """Workflow tasks the server force-closed because too many events were buffered while they ran."""
    cause = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_FORCE_CLOSE_COMMAND
    return sum(1 for event in history.events if event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_FAILED
               and event.workflow_task_failed_event_attributes.cause == cause)


def task_spans(history: Any) -> list[tuple[float, int]]:
    """Each workflow task's seconds from WorkflowTaskStarted to its end, and the local activities it recorded.

    A task that runs local activities stays open while they run (the SDK
    heartbeats it at 80 % of the task timeout, 8 s by default), so its
    duration is mostly the activities', not the workflow's own work.
    """
    started: dict[int, float] = {}
    spans: list[tuple[float, int]] = []
    for event in history.events:
        at = event.event_time.ToNanoseconds() / 1e9
        if event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            started[event.event_id] = at
        elif event.event_type in _TASK_ENDS:
            attrs = (event.workflow_task_completed_event_attributes
                     if event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
                     else event.workflow_task_failed_event_attributes
                     if event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_FAILED
                     else event.workflow_task_timed_out_event_attributes)
            begin = started.pop(attrs.started_event_id, None)
            if begin is not None:
                spans.append((at - begin, 0))
        elif (event.event_type == E.EVENT_TYPE_MARKER_RECORDED and spans
              and event.marker_recorded_event_attributes.marker_name == LOCAL_ACTIVITY_MARKER):
            spans[-1] = (spans[-1][0], spans[-1][1] + 1)  # a marker is a command of the task just completed
    return spans


def task_durations(history: Any) -> list[float]:
    """Seconds from each WorkflowTaskStarted to its WorkflowTaskCompleted (or Failed/TimedOut)."""
    return [seconds for seconds, _ in task_spans(history)]


def _closed_attributes(event: Any) -> Any:
    if event.event_type == E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        return event.activity_task_completed_event_attributes
    if event.event_type == E.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        return event.activity_task_failed_event_attributes
    if event.event_type == E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        return event.activity_task_timed_out_event_attributes
    return event.activity_task_canceled_event_attributes


def _activity_events(history: Any, types: set[str] | None):
    """(+1 scheduled / -1 closed) for each activity event of ``types`` (else any), in history order."""
    kinds: dict[int, str] = {}
    for event in history.events:
        if event.event_type == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            kind = event.activity_task_scheduled_event_attributes.activity_type.name
            kinds[event.event_id] = kind
            if types is None or kind in types:
                yield 1
        elif event.event_type in _ACTIVITY_CLOSED:
            if types is None or kinds.get(_closed_attributes(event).scheduled_event_id) in types:
                yield -1


def most_pending_activities(history: Any, types: set[str] | None = None) -> int:
    """The most activities (of ``types``, else any) scheduled and not yet closed at one point of the history."""
    pending = most = 0
    for change in _activity_events(history, types):
        pending += change
        most = max(most, pending)
    return most


def first_closed_after(history: Any, types: set[str]) -> int:
    """How many activities of ``types`` were scheduled before the first of them closed."""
    scheduled = 0
    for change in _activity_events(history, types):
        if change < 0:
            break
        scheduled += 1
    return scheduled


def most_buffered(history: Any) -> int:
    """The most activity events the server buffered while one workflow task ran.

    Events that arrive while a task is held are written right after its
    completion (before the next WorkflowTaskScheduled); over 100 of them the
    server force-closes the task instead.
    """
    events = list(history.events)
    most = 0
    for index, event in enumerate(events):
        if event.event_type not in _TASK_ENDS:
            continue
        count, later = 0, index + 1
        while later < len(events) and events[later].event_type != E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
            if events[later].event_type in (E.EVENT_TYPE_ACTIVITY_TASK_STARTED, *_ACTIVITY_CLOSED):
                count += 1
            later += 1
        most = max(most, count)
    return most


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def scheduled_per_task(history: Any, types: set[str] | None = None) -> list[int]:
    """Activities (of ``types``, else any) each completed workflow task scheduled, in order."""
    counts: list[int] = []
    for event in history.events:
        if event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            counts.append(0)
        elif event.event_type == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED and counts:
            kind = event.activity_task_scheduled_event_attributes.activity_type.name
            if types is None or kind in types:
                counts[-1] += 1
    return counts

