"""Observers of handler execution: task state changes, handler log lines and progress heartbeats.

Dispatch calls every listener for each event and swallows their errors, so a
broken dashboard or mirror can never fail a handler. Listeners must return
quickly (spool, don't write synchronously to slow stores).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol, runtime_checkable

TaskState = Literal["running", "completed", "failed", "canceled"]
"""``canceled``: the step was cancelled while its handler ran (the original's spelling of task states)."""

_log = logging.getLogger(__name__)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class TaskEvent:
    workflow_id: str
    run_id: str
    activity_id: str
    facet: str
    queue: str
    attempt: int
    state: TaskState
    payload: dict
    returns: dict | None = None
    error: str | None = None
    error_type: str | None = None
    task_token: str | None = None
    """Set on the ``running`` event of a step whose handler raised CompleteLater: the token to finish it with."""
    time: datetime = field(default_factory=_now)


@dataclass
class LogEvent:
    workflow_id: str
    run_id: str
    activity_id: str
    facet: str
    message: str
    level: str = "info"
    details: dict | None = None
    time: datetime = field(default_factory=_now)


@dataclass
class ProgressEvent:
    """A handler's ``_task_heartbeat(progress_pct, progress_message)`` (the task is running)."""

    workflow_id: str
    run_id: str
    activity_id: str
    facet: str
    queue: str
    attempt: int
    progress_pct: int | None = None
    progress_message: str | None = None
    time: datetime = field(default_factory=_now)


@runtime_checkable
class TaskListener(Protocol):
    """``on_progress(event: ProgressEvent)`` is optional: listeners without it are not told of progress."""

    def on_task(self, event: TaskEvent) -> None: ...

    def on_log(self, event: LogEvent) -> None: ...


def notify_task(listeners: Sequence[TaskListener], event: TaskEvent) -> None:
    for listener in listeners:
        try:
            listener.on_task(event)
        except Exception:  # a listener must never fail the handler
            _log.exception("task listener %r failed on %s %s", listener, event.facet, event.state)


def notify_log(listeners: Sequence[TaskListener], event: LogEvent) -> None:
    for listener in listeners:
        try:
            listener.on_log(event)
        except Exception:
            _log.exception("task listener %r failed on a log line of %s", listener, event.facet)


def notify_progress(listeners: Sequence[TaskListener], event: ProgressEvent) -> None:
    for listener in listeners:
        on_progress = getattr(listener, "on_progress", None)
        if on_progress is None:
            continue
        try:
            on_progress(event)
        except Exception:
            _log.exception("task listener %r failed on progress of %s", listener, event.facet)


class CollectingListener:
    """Keeps every event in memory: for tests and for small in-process runs."""

    def __init__(self) -> None:
        self.tasks: list[TaskEvent] = []
        self.logs: list[LogEvent] = []
        self.progress: list[ProgressEvent] = []

    def on_task(self, event: TaskEvent) -> None:
        self.tasks.append(event)

    def on_log(self, event: LogEvent) -> None:
        self.logs.append(event)

    def on_progress(self, event: ProgressEvent) -> None:
        self.progress.append(event)
