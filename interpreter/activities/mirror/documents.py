"""Turn mirror records into idempotent, monotonic document updates in the original schema's shape.

A record (a JSON-able dict with a ``kind``) becomes one ``MirrorOp`` per
document it touches. An op splits its fields by how they may change:

- ``set``: fields that never change (ids, names, paths, arguments) — always written;
- ``set_on_insert``: the original schema's defaults for a new document;
- ``min``/``max``: timestamps that only move earlier (created, started) or later
  (updated, ping, completed) — so records may arrive in any order;
- ``guarded``: the state and what goes with it (returns, error),
  written only if the record's ``rank`` (and, on a tie, its time) is not older
  than what the document holds. A replayed "running" never overwrites
  "completed"; a task's rank includes its attempt, so attempt 2 "running"
  does overwrite attempt 1 "failed".

Record kinds: ``runner``, ``step``, ``log`` and ``task`` (state "pending",
when the workflow schedules an event-facet activity) from the workflow (see
runtime-interfaces.md), ``task`` and ``task_log`` from the task listener,
``server`` from ``ServerRegistration``.

Every runner, step and task record also yields a ``logs`` entry for its state
change (``state_log_op``), named by document, state and attempt, so a
replayed or retried record never adds a second entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import ids, schema

MIRROR_FIELD = "_mirror"
"""Bookkeeping sub-document {rank, time} holding the guard of the last applied state."""


class RecordError(ValueError):
    """A record the mirror cannot turn into documents (missing ids, unknown kind)."""


@dataclass
class MirrorOp:
    collection: str
    uuid: str
    set: dict[str, Any] = field(default_factory=dict)
    set_on_insert: dict[str, Any] = field(default_factory=dict)
    min: dict[str, Any] = field(default_factory=dict)
    max: dict[str, Any] = field(default_factory=dict)
    guarded: dict[str, Any] = field(default_factory=dict)
    rank: int | None = None
    time: int = 0

    def updates(self) -> list[tuple[dict[str, Any], dict[str, Any], bool]]:
        """(filter, update, upsert) pairs: an ensuring upsert, then the guarded state update."""
        taken = set(self.set) | set(self.min) | set(self.max) | set(self.guarded)
        on_insert = {k: v for k, v in self.set_on_insert.items() if k not in taken and not _overlaps(k, taken)}
        if self.rank is not None:
            on_insert[f"{MIRROR_FIELD}.rank"] = -1
            on_insert[f"{MIRROR_FIELD}.time"] = 0
        first: dict[str, Any] = {"$set": {"uuid": self.uuid, **self.set}}
        for operator, values in (("$setOnInsert", on_insert), ("$min", self.min), ("$max", self.max)):
            if values:
                first[operator] = values
        result = [({"_id": self.uuid}, first, True)]
        if self.rank is not None:
            guard = {
                "_id": self.uuid,
                "$or": [
                    {f"{MIRROR_FIELD}.rank": {"$lt": self.rank}},
                    {f"{MIRROR_FIELD}.rank": self.rank, f"{MIRROR_FIELD}.time": {"$lte": self.time}},
                ],
            }
            fields = {**self.guarded, f"{MIRROR_FIELD}.rank": self.rank, f"{MIRROR_FIELD}.time": self.time}
            result.append((guard, {"$set": fields}, False))
        return result

    def preview(self) -> dict[str, Any]:
        """The document this op alone would create in an empty collection (for tests and docs)."""
        doc: dict[str, Any] = {"_id": self.uuid}
        for _, update, _ in self.updates():
            for operator in ("$setOnInsert", "$set", "$min", "$max"):
                for key, value in update.get(operator, {}).items():
                    _put(doc, key, value)
        return doc


def _overlaps(key: str, taken: set[str]) -> bool:
    return any(key.startswith(t + ".") or t.startswith(key + ".") for t in taken)


def _put(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        doc = doc.setdefault(part, {})
    doc[last] = value


# --------------------------------------------------------------------------- helpers


def _require(record: dict[str, Any], *keys: str) -> None:
    missing = [k for k in keys if not record.get(k)]
    if missing:
        raise RecordError(f"{record.get('kind')} record lacks {', '.join(missing)}: {record!r:.200}")


def _time(record: dict[str, Any]) -> int:
    value = ids.to_ms(record.get("time"))
    return value if value is not None else ids.now_ms()


def _error(value: Any, error_type: str | None = None) -> dict[str, Any] | None:
    """The original schema's Error/dict: {message, type}; None stays None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return dict(value)
    error = {"message": str(value)}
    if error_type:
        error["type"] = error_type
    return error


def parameters(values: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The original schema's ``list[Parameter]``: one {name, value} per argument, in the given order."""
    return [{"name": name, "value": value} for name, value in (values or {}).items()]


def _namespace(qname: str) -> str:
    return qname.rsplit(".", 1)[0] if "." in qname else ""


def workflow_definition(qname: str, program_hash: str | None, date: int = 0) -> dict[str, Any]:
    """The original schema's WorkflowDefinition for a workflow of a published program."""
    flow = ids.flow_uuid(program_hash) if program_hash else ""
    return {
        "uuid": ids.workflow_uuid(program_hash or "", qname),
        "name": qname,
        "namespace_id": _namespace(qname),
        "facet_id": qname,
        "flow_id": flow,
        "starting_step": "",
        "version": program_hash or "",
        "metadata": None,
        "documentation": None,
        "date": date,
    }


# --------------------------------------------------------------------------- builders


def runner_op(record: dict[str, Any]) -> MirrorOp:
    """runners: one per Temporal run; ``workflow_id`` is the Temporal workflow id."""
    _require(record, "workflow_id", "run_id")
    state = schema.STATE_ALIASES.get(record.get("state") or "running", record.get("state") or "running")
    if state not in schema.RUNNER_RANK:
        raise RecordError(f"unknown runner state {state!r}")
    time = _time(record)
    program_hash = record.get("program_hash") or None
    qname = record.get("workflow") or ""
    op = MirrorOp(schema.RUNNERS, ids.runner_uuid(record["workflow_id"], record["run_id"]), time=time)
    op.rank = schema.RUNNER_RANK[state]
    op.set = {"workflow_id": record["workflow_id"], "run_id": record["run_id"]}
    if qname:
        op.set["workflow"] = workflow_definition(qname, program_hash)
        op.set["workflow_name"] = qname
    if program_hash:
        op.set["flow_id"] = ids.flow_uuid(program_hash)
        op.set["program_hash"] = program_hash
    op.set_on_insert = {
        "parameters": [], "step_id": None, "user": None, "end_time": 0, "duration": 0, "retain": 0,
        "state": "created", "compiled_ast": None, "workflow_ast": None, "returns": None, "error": None,
    }  # fmt: skip
    op.min = {"start_time": time}
    op.max = {"updated": time}
    op.guarded = {"state": state}
    if record.get("params") is not None:  # a run's inputs never change: no guard needed
        op.set["parameters"] = parameters(record["params"])
    if record.get("returns") is not None:
        op.guarded["returns"] = record["returns"]
    if state in schema.FINISHED_RUNNER_STATES:
        op.max["end_time"] = time
        op.guarded["error"] = _error(record.get("error"), record.get("error_type"))
    return op


def step_op(record: dict[str, Any]) -> MirrorOp:
    """steps: one per step path per run; container/block/root ids are the uuids of those paths."""
    _require(record, "workflow_id", "run_id", "path")
    wf, run, path = record["workflow_id"], record["run_id"], record["path"]
    state = record.get("state") or "created"
    if state not in schema.STEP_RANK:
        raise RecordError(f"unknown step state {state!r}")
    time = _time(record)
    parent, block, root = record.get("parent_path"), record.get("block_path"), record.get("root_path")
    op = MirrorOp(schema.STEPS, ids.step_uuid(wf, run, path), rank=schema.STEP_RANK[state], time=time)
    op.set = {
        "runner_id": ids.runner_uuid(wf, run),
        "workflow_id": wf,
        "run_id": run,
        "path": path,
        "container_type": "Step" if parent else "Runner",
        "container_id": ids.step_uuid(wf, run, parent) if parent else ids.runner_uuid(wf, run),
        "block_id": ids.step_uuid(wf, run, block) if block else None,
        "root_id": ids.step_uuid(wf, run, root) if root else None,
        "is_starting_step": not parent,
    }
    if record.get("program_hash"):
        op.set["flow_id"] = op.set["flow_definition_id"] = ids.flow_uuid(record["program_hash"])
    op.set_on_insert = {
        "flow_id": "", "flow_definition_id": None, "flow_definition_json": None, "extra_data": None, "lock_status": "",
        "parameters": [], "state": "", "error": None,
    }  # fmt: skip
    # Records of one step may omit these (a failure record); a blank never overwrites a known value.
    for key, source, default in (("object_type", "object_type", "VariableAssignment"),
                                 ("statement_id", "statement_id", None), ("facets.name", "facet", None)):
        if record.get(source):
            op.set[key] = record[source]
        else:
            op.set_on_insert[key] = default  # fmt: skip
    op.min = {"timestamp.created": time}
    op.max = {"timestamp.updated": time}
    if state == "running":
        op.min["timestamp.started"] = time
    if state in schema.FINISHED_STEP_STATES:
        op.max["timestamp.completed"] = time
    op.guarded = {"state": state}
    if record.get("params") is not None:  # a step's arguments never change once evaluated
        op.set["parameters"] = parameters(record["params"])
        op.set["facets.params"] = record["params"]
    if record.get("returns") is not None:
        op.guarded["facets.returns"] = record["returns"]
    if state in schema.FINISHED_STEP_STATES or record.get("error") is not None:
        op.guarded["error"] = _error(record.get("error"), record.get("error_type"))
    return op


_LEVELS = {"error": ("error", 1), "critical": ("error", 1), "warning": ("warning", 5), "warn": ("warning", 5),
           "info": ("info", 5), "debug": ("info", 10)}  # fmt: skip


def _log(record: dict[str, Any], originator: str, object_id: str, object_type: str, step_id: str) -> MirrorOp:
    wf, run = record["workflow_id"], record["run_id"]
    time = _time(record)
    level = str(record.get("level") or "info").lower()
    note_type, importance = _LEVELS.get(level, ("info", 5))
    message = str(record.get("message", ""))
    path = record.get("path") or record.get("activity_id") or ""
    uuid = ids.log_uuid(originator, wf, run, path, time, level, message)
    details = {**(record.get("details") or {}), "workflow_id": wf, "run_id": run, "path": path}
    if record.get("facet"):
        details["facet"] = record["facet"]
    op = MirrorOp(schema.LOGS, uuid, time=time)
    op.set_on_insert = {
        "order": time, "runner_id": ids.runner_uuid(wf, run), "step_id": step_id, "object_id": object_id,
        "object_type": object_type, "note_originator": originator, "note_type": note_type,
        "note_importance": importance, "message": message, "state": record.get("state") or "",
        "line": int(record.get("line") or 0), "file": record.get("file") or "", "details": details, "time": time,
    }  # fmt: skip
    return op


def log_op(record: dict[str, Any]) -> MirrorOp:
    """logs from the workflow: originator "workflow", object = the step."""
    _require(record, "workflow_id", "run_id")
    wf, run, path = record["workflow_id"], record["run_id"], record.get("path") or ""
    step = ids.step_uuid(wf, run, path) if path else None
    return _log(record, "workflow", step or ids.runner_uuid(wf, run), "step" if path else "runner", step)


def task_log_op(record: dict[str, Any]) -> MirrorOp:
    """logs from a handler (through the task listener): originator "agent", object = the task."""
    _require(record, "workflow_id", "run_id", "activity_id")
    wf, run, act = record["workflow_id"], record["run_id"], record["activity_id"]
    return _log(record, "agent", ids.task_uuid(wf, run, act), "task", ids.step_uuid(wf, run, act))


def task_op(record: dict[str, Any]) -> MirrorOp:
    """tasks: one per step path per run (the activity id); attempts update it, never add one.

    ``step_id`` is the step's uuid, so the partial unique index on running
    tasks holds by construction: a step has exactly one task document.
    """
    _require(record, "workflow_id", "run_id", "activity_id")
    wf, run, act = record["workflow_id"], record["run_id"], record["activity_id"]
    state = record.get("state") or "running"
    if state not in schema.TASK_RANK:
        raise RecordError(f"unknown task state {state!r}")
    attempt = max(1, int(record.get("attempt") or 1))
    time = _time(record)
    op = MirrorOp(schema.TASKS, ids.task_uuid(wf, run, act), time=time)
    op.rank = attempt * 10 + schema.TASK_RANK[state]
    op.set = {
        "name": record.get("facet") or "",
        "runner_id": ids.runner_uuid(wf, run),
        "workflow_id": wf,
        "run_id": run,
        "step_id": ids.step_uuid(wf, run, act),
        "activity_id": act,
        "task_list_name": record.get("queue") or "default",
    }
    if record.get("program_hash"):  # the workflow's pending record knows the program
        op.set["flow_id"] = ids.flow_uuid(record["program_hash"])
    op.set_on_insert = {"flow_id": "", "state": "pending", "error": None, "data_type": "json", "data": {}}
    op.min = {"created": time}
    op.max = {"updated": time}
    op.guarded = {
        "state": state,
        "attempt": attempt,
        "retry_count": attempt - 1,
        "error": _error(record.get("error"), record.get("error_type")) if state == "failed" else None,
    }
    if record.get("payload") is not None:
        op.set["data.payload"] = record["payload"]
    if record.get("returns") is not None:
        op.guarded["data.returns"] = record["returns"]
    if record.get("heartbeat") is not None:  # a handler's _task_heartbeat(progress_pct, progress_message)
        op.guarded["task_heartbeat"] = record["heartbeat"]
        for key in ("progress_pct", "progress_message"):
            if record.get(key) is not None:
                op.guarded[key] = record[key]
    return op


def server_op(record: dict[str, Any]) -> MirrorOp:
    """servers: one per worker process; ping_time only moves forward."""
    _require(record, "uuid")
    state = record.get("state") or "running"
    if state not in schema.SERVER_RANK:
        raise RecordError(f"unknown server state {state!r}")
    time = _time(record)
    op = MirrorOp(schema.SERVERS, record["uuid"], rank=schema.SERVER_RANK[state], time=time)
    op.set = {
        key: record.get(key, default)
        for key, default in (("server_group", ""), ("service_name", ""), ("server_name", ""), ("server_ips", []),
                             ("topics", []), ("handlers", []), ("manager", ""))
    }  # fmt: skip
    if record.get("handled") is not None:
        op.set["handled"] = record["handled"]
    op.set_on_insert = {"handled": [], "state": "startup", "error": None}
    op.min = {"start_time": ids.to_ms(record.get("start_time")) or time}
    op.max = {"ping_time": time}
    op.guarded = {"state": state, "error": _error(record.get("error"))}
    return op


_STATE_LOG_SUBJECTS = {"runner": "runner", "step": "step", "task": "task"}


def state_log_op(record: dict[str, Any], op: MirrorOp) -> MirrorOp | None:
    """The ``logs`` entry for the state change a runner, step or task record reports.

    Named by the document, its state and (tasks) the attempt, so writing the
    record again, or replaying the workflow, keeps one entry per change.
    """
    subject = _STATE_LOG_SUBJECTS.get(record.get("kind", ""))
    if subject is None or op.rank is None:
        return None
    state = op.guarded.get("state", "")
    wf, run = record["workflow_id"], record["run_id"]
    path = record.get("path") or record.get("activity_id") or ""
    attempt = op.guarded.get("attempt") if subject == "task" else None
    error = op.guarded.get("error")
    if subject == "runner":
        message = f"runner {record.get('workflow') or wf} {state}"
    elif subject == "step":
        message = f"step {path} ({record.get('facet') or record.get('object_type') or 'step'}) {state}"
    else:
        message = f"task {record.get('facet') or ''} for step {path} {state}"
        message += f" (attempt {attempt})" if attempt and attempt > 1 else ""
    if error:
        message += f": {error.get('message', '')}"
    from_agent = subject == "task" and state != "pending"
    log = MirrorOp(schema.LOGS, ids.log_uuid("state", op.collection, op.uuid, state, attempt or 0), time=op.time)
    log.set_on_insert = {
        "order": op.time, "runner_id": ids.runner_uuid(wf, run),
        "step_id": ids.step_uuid(wf, run, path) if path else None, "object_id": op.uuid,
        "object_type": subject, "note_originator": "agent" if from_agent else "workflow",
        "note_type": "error" if state == "failed" else "info", "note_importance": 1 if state == "failed" else 10,
        "message": message, "state": state, "line": 0, "file": "",
        "details": {"workflow_id": wf, "run_id": run, "path": path, "change": "state", **(
            {"attempt": attempt} if attempt else {})},
        "time": op.time,
    }  # fmt: skip
    return log


BUILDERS = {"runner": runner_op, "step": step_op, "log": log_op, "task": task_op, "task_log": task_log_op,
            "server": server_op}  # fmt: skip


def build_ops(record: dict[str, Any]) -> list[MirrorOp]:
    """The ops for one record (its document, then its state-change log entry, if any).

    Raises RecordError for a record that cannot be mirrored.
    """
    if not isinstance(record, dict):
        raise RecordError(f"not a record: {record!r:.200}")
    builder = BUILDERS.get(record.get("kind", ""))
    if builder is None:
        raise RecordError(f"unknown record kind {record.get('kind')!r}")
    try:
        op = builder(record)
        log = state_log_op(record, op)
    except (TypeError, ValueError, KeyError) as exc:
        if isinstance(exc, RecordError):
            raise
        raise RecordError(f"bad {record.get('kind')} record: {exc}") from exc
    return [op] if log is None else [op, log]
