"""Log entries: the runner-wide ``logs`` and the per-step ``step_logs``, with a deterministic order.

``order`` is a per-runner sequence taken from the workflow, never a clock:
each record the workflow emits carries ``seq`` (its position in the run), and
its entries get ``seq * ORDER_SLOT``. A handler's entries (task states and
``_step_log`` lines, from another process) belong to the task the workflow
scheduled with record ``S``: they get ``S * ORDER_SLOT + attempt * 4096 +
index``, so they sort right after that record, attempt by attempt, line by
line. The handler side cannot know ``S``: its entries are written with
``order`` null and ``_mirror.sub`` holding the rest, and the writer fills
``order`` in once the task document holds its anchor (``_mirror.anchor``),
whichever side reaches MongoDB first.

Every entry is named by what it records (document + state, or the line's
content), so a replayed or retried record never adds a second entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import ids, schema
from .ops import MIRROR_FIELD, MirrorOp

ORDER_SLOT = 1 << 20
ATTEMPT_SLOT = 4096
MAX_ATTEMPT = ORDER_SLOT // ATTEMPT_SLOT - 1

NOTE_LEVELS = {"error": ("error", 1), "critical": ("error", 1), "warning": ("warning", 5), "warn": ("warning", 5),
               "info": ("info", 5), "success": ("info", 5), "debug": ("info", 10)}  # fmt: skip
"""Handler log level → the schema's (note_type, note_importance)."""

STEP_LOG_LEVELS = {"error": "error", "critical": "error", "warning": "warning", "warn": "warning",
                   "success": "success", "info": "info", "debug": "info"}  # fmt: skip
"""Handler log level → the original runtime's step log level (info, warning, error, success)."""


def workflow_order(record: Mapping[str, Any]) -> int | None:
    """The order of a workflow record's entries; records without ``seq`` (older spools) fall back to time."""
    seq = record.get("seq")
    if seq is None:
        return ids.to_ms(record.get("time"))
    return int(seq) * ORDER_SLOT


def agent_sub(attempt: int, index: int) -> int:
    """A handler entry's place after its task's anchor: attempt by attempt, then line by line."""
    return min(max(attempt, 1), MAX_ATTEMPT) * ATTEMPT_SLOT + min(max(index, 0), ATTEMPT_SLOT - 1)


def log_entry(uuid: str, *, runner_id: str, step_id: str | None, object_id: str, object_type: str,
              originator: str, note_type: str, importance: int, message: str, state: str, details: dict[str, Any],
              time: int, order: int | None, sub: int | None = None, line: int = 0, file: str = "") -> MirrorOp:
    """One ``logs`` document (the original schema's LogDefinition); written once, never changed."""
    op = MirrorOp(schema.LOGS, uuid, time=time)
    op.set_on_insert = {
        "order": order, "runner_id": runner_id, "step_id": step_id, "object_id": object_id,
        "object_type": object_type, "note_originator": originator, "note_type": note_type,
        "note_importance": importance, "message": message, "state": state, "line": line, "file": file,
        "details": details, "time": time,
    }  # fmt: skip
    if sub is not None:
        op.set_on_insert[f"{MIRROR_FIELD}.sub"] = sub
    return op


def step_log_entry(uuid: str, *, workflow_id: str, run_id: str, path: str, facet: str | None, source: str,
                   level: str, message: str, state: str, details: dict[str, Any] | None, time: int,
                   order: int | None, sub: int | None = None) -> MirrorOp:
    """One ``step_logs`` document (the original runtime's StepLogEntry) for the step at ``path``.

    ``workflow_id`` is the run's workflow document, as on the step itself, so
    the entries of one run are found the way its steps are.
    """
    op = MirrorOp(schema.STEP_LOGS, uuid, time=time)
    op.set_on_insert = {
        "step_id": ids.step_uuid(workflow_id, run_id, path), "workflow_id": ids.run_workflow_uuid(workflow_id, run_id),
        "runner_id": ids.runner_uuid(workflow_id, run_id), "facet_name": facet or "", "source": source,
        "level": level, "message": message, "state": state, "details": dict(details or {}), "time": time,
        "order": order, "temporal_workflow_id": workflow_id, "temporal_run_id": run_id, "path": path,
    }  # fmt: skip
    if sub is not None:
        op.set_on_insert[f"{MIRROR_FIELD}.sub"] = sub
    return op


def resolve_orders(db: Any, tasks: set[tuple[str, str, str]]) -> int:
    """Fill in ``order`` of handler entries whose task's anchor is known; returns how many tasks had one.

    ``tasks`` holds (workflow id, run id, activity id). Idempotent: only
    entries still without an order are touched.
    """
    from pymongo import UpdateMany

    by_task = {ids.task_uuid(*key): key for key in tasks}
    if not by_task:
        return 0
    found = db[schema.TASKS].find({"_id": {"$in": list(by_task)}, f"{MIRROR_FIELD}.anchor": {"$exists": True}},
                                  {f"{MIRROR_FIELD}.anchor": 1})  # fmt: skip
    logs, step_logs = [], []
    for task in found:
        anchor = int(task[MIRROR_FIELD]["anchor"]) * ORDER_SLOT
        fill = [{"$set": {"order": {"$add": [anchor, f"${MIRROR_FIELD}.sub"]}}}]
        wf, run, act = by_task[task["_id"]]
        logs.append(UpdateMany({"object_id": task["_id"], "order": None}, fill))
        step_logs.append(UpdateMany({"step_id": ids.step_uuid(wf, run, act), "order": None}, fill))
    if logs:
        db[schema.LOGS].bulk_write(logs, ordered=False)
        db[schema.STEP_LOGS].bulk_write(step_logs, ordered=False)
    return len(logs)
