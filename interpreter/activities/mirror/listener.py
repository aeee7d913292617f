"""MirrorTaskListener: handler task events and log lines into the tasks, logs and step_logs collections.

It implements the TaskListener protocol of ``interpreter.activities.listeners``
by reading the events' attributes, turns each event into a ``task`` or
``task_log`` record and hands it to a MirrorSink (normally a MirrorWriter),
which only queues it: the handler is never slowed by MongoDB.

Every attempt of an activity updates the same task document (its uuid is
derived from workflow id, run id and activity id = step path), with
``attempt`` and ``retry_count``, so the partial unique index on running tasks
can never be violated by a retry. Records carry the worker's ``server_id``
(its servers document) and ``index``, the event's position within its
attempt, which orders a handler's entries after the task's scheduling
(entries.py). A log line's ``details`` are passed on; a handler's
``_task_heartbeat(progress_pct, progress_message)`` arrives as a ProgressEvent
and becomes a ``running`` task record with ``heartbeat`` and the progress.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ...program.mirror_records import TaskLogRecord, TaskRecord
from .ids import to_ms

log = logging.getLogger(__name__)

FINISHED = ("completed", "failed", "canceled")


def task_record(event: Any, server_id: str = "", index: int = 0) -> TaskRecord:
    """The ``task`` record of a TaskEvent (JSON-able; time in ms)."""
    record: TaskRecord = {
        "kind": "task",
        "workflow_id": event.workflow_id,
        "run_id": event.run_id,
        "activity_id": event.activity_id,
        "facet": event.facet,
        "queue": event.queue,
        "attempt": int(event.attempt or 1),
        "state": event.state,
        "payload": dict(event.payload) if event.payload is not None else None,
        "returns": event.returns,
        "error": event.error,
        "error_type": event.error_type,
        "time": to_ms(event.time),
        "server_id": server_id,
        "index": index,
    }
    for key in ("progress_pct", "progress_message", "task_token"):
        if getattr(event, key, None) is not None:
            record[key] = getattr(event, key)
    return record


def log_record(event: Any, server_id: str = "", index: int = 0, attempt: int = 1) -> TaskLogRecord:
    """The ``task_log`` record of a LogEvent."""
    record: TaskLogRecord = {
        "kind": "task_log",
        "workflow_id": event.workflow_id,
        "run_id": event.run_id,
        "activity_id": event.activity_id,
        "facet": event.facet,
        "message": event.message,
        "level": getattr(event, "level", "info"),
        "time": to_ms(event.time),
        "server_id": server_id,
        "attempt": int(getattr(event, "attempt", None) or attempt),
        "index": index,
    }
    details = getattr(event, "details", None)
    if details is not None:
        record["details"] = details if isinstance(details, dict) else {"value": details}
    return record


def progress_record(event: Any, server_id: str = "", index: int = 0) -> TaskRecord:
    """The ``task`` record of a ProgressEvent: the running task's heartbeat time and progress."""
    return {
        "kind": "task",
        "workflow_id": event.workflow_id,
        "run_id": event.run_id,
        "activity_id": event.activity_id,
        "facet": event.facet,
        "queue": event.queue,
        "attempt": int(event.attempt or 1),
        "state": "running",
        "progress_pct": event.progress_pct,
        "progress_message": event.progress_message,
        "heartbeat": to_ms(event.time),
        "time": to_ms(event.time),
        "server_id": server_id,
        "index": index,
    }


class MirrorTaskListener:
    """A TaskListener writing to a MirrorSink; optionally counts handled tasks for a ServerRegistration."""

    def __init__(self, sink: Any, registration: Any = None) -> None:
        self.sink = sink
        self.registration = registration
        self.server_id = getattr(registration, "uuid", "") or ""
        self._lock = threading.Lock()
        self._attempts: dict[tuple[str, str, str], list[int]] = {}  # running task → [attempt, next index]

    def _next(self, event: Any, attempt: int | None = None, finished: bool = False) -> tuple[int, int]:
        """(attempt, index) of an event: its place among its attempt's events in this process."""
        key = (event.workflow_id, event.run_id, event.activity_id)
        with self._lock:
            if len(self._attempts) > 100_000:  # attempts that never finished (cancelled, killed)
                self._attempts.clear()
            slot = self._attempts.get(key)
            if attempt is not None and (slot is None or slot[0] != attempt):
                slot = self._attempts[key] = [attempt, 0]
            elif slot is None:
                slot = self._attempts[key] = [1, 0]
            index = slot[1]
            slot[1] += 1
            if finished:
                del self._attempts[key]
            return slot[0], index

    def on_task(self, event: Any) -> None:
        try:
            _, index = self._next(event, int(event.attempt or 1), finished=event.state in FINISHED)
            self.sink.write([task_record(event, self.server_id, index)])
            # A cancelled task was neither handled nor refused by its handler: it counts as neither.
            if self.registration is not None and event.state in ("completed", "failed"):
                self.registration.count(event.facet, event.state == "completed")
        except Exception as exc:  # noqa: BLE001 - a listener must never fail a handler
            log.warning("mirror listener: task event not mirrored: %s", exc)

    def on_log(self, event: Any) -> None:
        try:
            attempt, index = self._next(event, getattr(event, "attempt", None))
            self.sink.write([log_record(event, self.server_id, index, attempt)])
        except Exception as exc:  # noqa: BLE001
            log.warning("mirror listener: log event not mirrored: %s", exc)

    def on_progress(self, event: Any) -> None:
        try:
            _, index = self._next(event, int(event.attempt or 1))
            self.sink.write([progress_record(event, self.server_id, index)])
        except Exception as exc:  # noqa: BLE001
            log.warning("mirror listener: progress not mirrored: %s", exc)
