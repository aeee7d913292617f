"""What a handler receives: the step's arguments plus the runtime extras the original runtime gave.

Extras (reachable by key, never iterated — see HandlerPayload):

- ``_facet_name``: the event facet's qualified name (one ``handle`` function
  may serve many facets);
- ``_task_uuid``: a stable id of the task, the same on every attempt and
  replay (a UUIDv5 of the activity's workflow id and activity id = step path);
- ``_handler_metadata``: the ``metadata`` its registration gave (else ``{}``);
- ``_retry_count`` / ``_is_retry``: the attempt, from 0 / after the first;
- ``_task_token``: this attempt's Temporal task token (URL-safe base64), for
  a handler that raises ``CompleteLater``: ``ffl complete TOKEN JSON`` or
  ``ffl fail TOKEN MESSAGE`` finishes the step from any process;
- ``_step_log(message, level="info", details=None)``: a log line for the
  worker log and the mirror, ``level`` one of info, success, warning, error;
  ``_step_log.append({"message", "level", "details"})`` does the same, for the
  handlers of the original's examples that treat it as a list;
- ``_task_heartbeat(progress_pct=None, progress_message=None)``: a Temporal
  heartbeat whose details carry the progress (``ffl status`` shows it, the
  mirror's task document keeps it); ``_task_heartbeat(details)`` with any
  other single value sends that value as the heartbeat's details. Once the
  step is cancelled, a plain ``def`` handler's next call raises
  ``asyncio.CancelledError`` (an ``async def`` handler is cancelled where it
  awaits); until a handler's first heartbeat, its worker heartbeats for it.
"""

from __future__ import annotations

import base64
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .listeners import LogEvent, ProgressEvent, TaskListener, notify_log, notify_progress

STEP_LOG_LEVELS = {"info": logging.INFO, "success": logging.INFO, "warning": logging.WARNING,
                   "error": logging.ERROR}  # fmt: skip
_TASK_NAMESPACE = uuid.UUID("0c6f1f5e-7d43-5a8e-bb1e-3f2a9c4d7e10")
PROGRESS_NOTIFY_SECONDS = 5.0
"""Listeners hear of an unchanged progress at most this often (the mirror need not see every heartbeat)."""


class HandlerPayload(dict):
    """The step's arguments, plus runtime extras reachable by key but never iterated.

    ``payload["_step_log"]``, ``payload.get("_retry_count")`` and ``"_is_retry" in
    payload`` work, while ``dict(payload)``, ``json.dumps(payload)`` or iterating
    it see only the arguments, so a handler that echoes its payload returns
    clean, serialisable data.
    """

    def __init__(self, args: Mapping[str, Any], extras: Mapping[str, Any]) -> None:
        super().__init__(args)
        self._extras = dict(extras)

    def __missing__(self, key: str) -> Any:
        if key in self._extras:
            return self._extras[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self._extras.get(key, default)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self._extras


def task_uuid(workflow_id: str, activity_id: str) -> str:
    """The task's stable id: the same for every attempt and replay of one step of one workflow."""
    return str(uuid.uuid5(_TASK_NAMESPACE, f"{workflow_id}\x1f{activity_id}"))


def level_name(level: Any) -> str:
    """A step-log level as the original runtime names it (info, success, warning, error)."""
    if isinstance(level, int) and not isinstance(level, bool):
        name = logging.getLevelName(level).lower()
    else:
        name = str(getattr(level, "value", level) or "info").lower()
    return {"warn": "warning", "critical": "error", "fatal": "error"}.get(name, name)


@dataclass
class Progress:
    """One heartbeat's progress; ``details`` is what Temporal's heartbeat carries."""

    pct: int | None
    message: str | None
    details: Any

    @property
    def reported(self) -> bool:
        return self.pct is not None or self.message is not None


def parse_heartbeat(args: Sequence[Any], kwargs: Mapping[str, Any]) -> Progress:
    """``(progress_pct=None, progress_message=None)``, or the older ``(details)`` with any other value."""
    unknown = set(kwargs) - {"progress_pct", "progress_message", "details"}
    if unknown or len(args) > 2:
        raise TypeError("_task_heartbeat(progress_pct=None, progress_message=None) takes at most two arguments"
                        + (f", not {', '.join(sorted(unknown))}" if unknown else ""))  # fmt: skip
    pct, message, details = kwargs.get("progress_pct"), kwargs.get("progress_message"), kwargs.get("details")
    if args:
        first = args[0]
        if isinstance(first, (int, float)) and not isinstance(first, bool):
            pct = first
            message = args[1] if len(args) > 1 else message
        elif len(args) == 1:
            details = first
        else:
            raise TypeError(f"_task_heartbeat: progress_pct must be a number, got {type(first).__name__}")
    if pct is not None:
        pct = max(0, min(100, int(pct)))
    if message is not None:
        message = str(message)
    if pct is None and message is None:
        return Progress(None, None, details)
    carried: dict[str, Any] = {"progress_pct": pct, "progress_message": message}
    if details is not None:
        carried["details"] = details
    return Progress(pct, message, carried)


class StepLog:
    """``_step_log``: called with ``(message, level, details)``, or appended to with one entry dict."""

    def __init__(self, write: Callable[[Any, Any, Mapping[str, Any] | None], None]) -> None:
        self._write = write

    def __call__(self, message: Any, level: Any = "info", details: Mapping[str, Any] | None = None) -> None:
        self._write(message, level, details)

    def append(self, entry: Any) -> None:
        if isinstance(entry, Mapping):
            self._write(entry.get("message", ""), entry.get("level", "info"), entry.get("details"))
        else:
            self._write(entry, "info", None)


@dataclass
class TaskIdentity:
    workflow_id: str
    run_id: str
    activity_id: str
    facet: str
    queue: str
    attempt: int
    task_token: str = ""


def encode_task_token(token: bytes) -> str:
    """A task token as text a shell can pass (``ffl complete TOKEN ...``)."""
    return base64.urlsafe_b64encode(token).decode("ascii")


def decode_task_token(text: str) -> bytes:
    """The task token ``encode_task_token`` gave; ValueError for text that is not one."""
    try:
        token = base64.urlsafe_b64decode(text.strip().encode("ascii") + b"=" * (-len(text.strip()) % 4))
    except (ValueError, UnicodeEncodeError) as err:
        raise ValueError(f"not a task token (expected the URL-safe base64 text of payload['_task_token']): {err}") \
            from None
    if not token:
        raise ValueError("not a task token: it is empty")
    return token


def build_extras(task: TaskIdentity, metadata: Mapping[str, Any], listeners: Sequence[TaskListener],
                 send_heartbeat: Callable[..., None], logger: logging.LoggerAdapter | logging.Logger) -> dict:
    """The extras of one attempt; ``send_heartbeat(*details)`` reaches Temporal from any thread."""
    last: list[Any] = [None, 0.0]  # (pct, message) last told to listeners, and when

    def step_log(message: Any, level: Any = "info", details: Mapping[str, Any] | None = None) -> None:
        name = level_name(level)
        logger.log(STEP_LOG_LEVELS.get(name, logging.INFO), "%s", message)
        notify_log(listeners, LogEvent(
            workflow_id=task.workflow_id, run_id=task.run_id, activity_id=task.activity_id, facet=task.facet,
            message=str(message), level=name, details=dict(details) if details else None,
        ))  # fmt: skip

    def heartbeat(*args: Any, **kwargs: Any) -> None:
        progress = parse_heartbeat(args, kwargs)
        send_heartbeat(*(() if progress.details is None else (progress.details,)))
        if not progress.reported:
            return
        now = time.monotonic()
        if last[0] == (progress.pct, progress.message) and now - last[1] < PROGRESS_NOTIFY_SECONDS:
            return
        last[0], last[1] = (progress.pct, progress.message), now
        notify_progress(listeners, ProgressEvent(
            workflow_id=task.workflow_id, run_id=task.run_id, activity_id=task.activity_id, facet=task.facet,
            queue=task.queue, attempt=task.attempt, progress_pct=progress.pct, progress_message=progress.message,
        ))  # fmt: skip

    return {
        "_facet_name": task.facet,
        "_task_uuid": task_uuid(task.workflow_id, task.activity_id),
        "_handler_metadata": dict(metadata),
        "_step_log": StepLog(step_log),
        "_task_heartbeat": heartbeat,
        "_retry_count": task.attempt - 1,
        "_is_retry": task.attempt > 1,
        "_task_token": task.task_token,
    }
