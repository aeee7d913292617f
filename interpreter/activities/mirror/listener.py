"""MirrorTaskListener: handler task events and log lines into the tasks and logs collections.

It implements the TaskListener protocol of ``interpreter.activities.listeners``
by reading the events' attributes, turns each event into a ``task`` or
``task_log`` record and hands it to a MirrorSink (normally a MirrorWriter),
which only queues it: the handler is never slowed by MongoDB.

Every attempt of an activity updates the same task document (its uuid is
derived from workflow id, run id and activity id = step path), with
``attempt`` and ``retry_count``, so the partial unique index on running tasks
can never be violated by a retry.
"""

from __future__ import annotations

import logging
from typing import Any

from .ids import to_ms

log = logging.getLogger(__name__)


def task_record(event: Any) -> dict[str, Any]:
    """The ``task`` record of a TaskEvent (JSON-able; time in ms)."""
    return {
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
    }


def log_record(event: Any) -> dict[str, Any]:
    """The ``task_log`` record of a LogEvent."""
    record = {
        "kind": "task_log",
        "workflow_id": event.workflow_id,
        "run_id": event.run_id,
        "activity_id": event.activity_id,
        "facet": event.facet,
        "message": event.message,
        "level": getattr(event, "level", "info"),
        "time": to_ms(event.time),
    }
    if getattr(event, "details", None):
        record["details"] = dict(event.details)
    return record


def progress_record(event: Any) -> dict[str, Any]:
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
    }


class MirrorTaskListener:
    """A TaskListener writing to a MirrorSink; optionally counts handled tasks for a ServerRegistration."""

    def __init__(self, sink: Any, registration: Any = None) -> None:
        self.sink = sink
        self.registration = registration

    def on_task(self, event: Any) -> None:
        try:
            self.sink.write([task_record(event)])
            if self.registration is not None and event.state in ("completed", "failed"):
                self.registration.count(event.facet, event.state == "completed")
        except Exception as exc:  # noqa: BLE001 - a listener must never fail a handler
            log.warning("mirror listener: task event not mirrored: %s", exc)

    def on_log(self, event: Any) -> None:
        try:
            self.sink.write([log_record(event)])
        except Exception as exc:  # noqa: BLE001
            log.warning("mirror listener: log event not mirrored: %s", exc)

    def on_progress(self, event: Any) -> None:
        try:
            self.sink.write([progress_record(event)])
        except Exception as exc:  # noqa: BLE001
            log.warning("mirror listener: progress not mirrored: %s", exc)
