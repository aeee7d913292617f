"""Turn mirror records into documents in the original runtime's vocabulary and shapes (docs/mirror.md).

A record (interpreter/program/mirror_records.py: a typed JSON object with a ``kind``) becomes the ops of every document
it touches (ops.py: idempotent, monotonic upserts):

- ``runner`` → the runner, the run's own ``workflows`` document, the run's
  root step (object type ``Workflow``, whose state follows the runner), a
  ``logs`` and a ``step_logs`` entry; a failed or cancelled run's end also
  closes the steps it left open;
- ``step`` → the step or block, its entries, and for a block that starts the
  state it puts its owner step in (its blocks' state, or its catch's);
- ``task`` → the task; the workflow's ``pending`` record also puts the step
  in ``state.EventTransmit`` (waiting on its handler); a handler's records
  carry the worker's ``server_id``;
- ``log`` / ``task_log`` → a ``logs`` and a ``step_logs`` entry;
- ``server`` → the worker's ``servers`` document.

The interpreter reports a step's lifecycle (``lifecycle``: running,
completed, ...); the original vocabulary (``state``) is derived here, with
``schema.step_state``. Records are read as they are sent (a batch of an older
run, a spool of an older writer alike); ``server`` records are servers.py's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...program.mirror_records import (
    LogRecord,
    MirrorRecord,
    RunnerRecord,
    ScheduledTaskRecord,
    StepRecord,
    TaskLogRecord,
    TaskRecord,
)
from . import entries, ids, schema
from .ops import MIRROR_FIELD, MirrorOp, MirrorSweep, guard_key

__all__ = ["MIRROR_FIELD", "BUILDERS", "MirrorOp", "MirrorSweep", "RecordError", "build_ops", "parameters",
           "workflow_definition"]  # fmt: skip


class RecordError(ValueError):
    """A record the mirror cannot turn into documents (missing ids, unknown kind)."""


OBJECT_TYPE_ALIASES = {"AndMatch": "AndWhen"}
"""The interpreter's older block names → the original runtime's."""


# --------------------------------------------------------------------------- helpers


def _require(record: Mapping[str, Any], *keys: str) -> None:
    missing = [k for k in keys if not record.get(k)]
    if missing:
        raise RecordError(f"{record.get('kind')} record lacks {', '.join(missing)}: {record!r:.200}")


def _time(record: Mapping[str, Any]) -> int:
    value = ids.to_ms(record.get("time"))
    return value if value is not None else ids.now_ms()


def _error(value: Any, error_type: str | None = None) -> dict[str, Any] | None:
    """The schema's Error: {message, type?}; None stays None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return dict(value)
    error = {"message": str(value)}
    if error_type:
        error["type"] = error_type
    return error


def _error_text(error: dict[str, Any] | None) -> str:
    if not error:
        return ""
    return (f"{error['type']}: " if error.get("type") else "") + str(error.get("message", ""))


def parameters(values: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The schema's ``list[Parameter]``: one {name, value} per argument, in the given order."""
    return [{"name": name, "value": value} for name, value in (values or {}).items()]


def type_hint(value: Any) -> str:
    """The original runtime's type hint of a value (as its AttributeValue infers it)."""
    if isinstance(value, bool):
        return "Boolean"
    if isinstance(value, int):
        return "Long"
    if isinstance(value, float):
        return "Double"
    if isinstance(value, str):
        return "String"
    if isinstance(value, list):
        return "List"
    if isinstance(value, dict):
        return "Map"
    return "Any"


def attributes(values: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The original runtime's attribute map: name → {name, value, type_hint}."""
    return {name: {"name": name, "value": value, "type_hint": type_hint(value)} for name, value in (values or {}).items()}


def _namespace(qname: str) -> str:
    return qname.rsplit(".", 1)[0] if "." in qname else ""


def _last(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def workflow_definition(qname: str, program_hash: str | None, date: int = 0) -> dict[str, Any]:
    """The schema's WorkflowDefinition for a workflow of a published program."""
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


def _run_definition(wf: str, run: str, qname: str, program_hash: str) -> dict[str, Any]:
    """The run's own WorkflowDefinition (without ``date``, which only moves earlier)."""
    definition = workflow_definition(qname, program_hash)
    del definition["date"], definition["metadata"], definition["documentation"]
    definition.update(uuid=ids.run_workflow_uuid(wf, run), starting_step=ids.root_step_uuid(wf, run))
    return definition


# --------------------------------------------------------------------------- steps


def _step_base(wf: str, run: str, path: str, object_type: str, lifecycle: str, time: int) -> MirrorOp:
    """The fields every step document has, whatever its kind."""
    op = MirrorOp(schema.STEPS, ids.step_uuid(wf, run, path), rank=schema.STEP_RANK[lifecycle], time=time)
    op.set = {
        "runner_id": ids.runner_uuid(wf, run), "workflow_id": ids.run_workflow_uuid(wf, run),
        "temporal_workflow_id": wf, "temporal_run_id": run, "path": path, "object_type": object_type,
        "is_block": object_type in schema.BLOCK_TYPES,
    }  # fmt: skip
    op.set_on_insert = {
        "flow_id": "", "flow_definition_id": None, "flow_definition_json": None, "extra_data": None,
        "lock_status": "", "parameters": [], "state": "", "lifecycle": "", "error": None, "statement_id": None,
        "facet_name": None, "facets.name": None, "facets.params": {}, "facets.returns": {},
        "attributes.params": {}, "attributes.returns": {},
    }  # fmt: skip
    op.min = {"timestamp.created": time, "start_time": time}
    op.max = {"timestamp.updated": time, "last_modified": time}
    if lifecycle != "created":
        op.min["timestamp.started"] = time
    if lifecycle in schema.FINISHED_LIFECYCLES:
        op.max["timestamp.completed"] = time
    op.guarded = {"state": schema.step_state(lifecycle, object_type), "lifecycle": lifecycle}
    return op


def _step_values(op: MirrorOp, lifecycle: str, params: Any, returns: Any, error: dict[str, Any] | None) -> None:
    if params is not None:  # a step's arguments never change once evaluated: no guard needed
        op.set["parameters"] = parameters(params)
        op.set["facets.params"] = params
        op.set["attributes.params"] = attributes(params)
    if returns is not None:
        op.guarded["facets.returns"] = returns
        op.guarded["attributes.returns"] = attributes(returns)
    if lifecycle in schema.FINISHED_LIFECYCLES or error is not None:
        op.guarded["error"] = error


def object_type_of(record: Mapping[str, Any]) -> str:
    """The original object type of a step record: ``AndWhen`` for when blocks, ``AndCatch`` for catch blocks."""
    kind = record.get("object_type") or "VariableAssignment"
    kind = OBJECT_TYPE_ALIASES.get(kind, kind)
    if kind in schema.BLOCK_TYPES and _last(record["path"]) == "catch":
        return "AndCatch"
    return kind


def _lifecycle(record: Mapping[str, Any], default: str) -> str:
    state = record.get("state") or default
    state = schema.STATE_ALIASES.get(state, state)
    if state not in schema.STEP_RANK:
        raise RecordError(f"unknown step state {state!r}")
    return state


def _block_of(record: Mapping[str, Any], is_block: bool) -> str | None:
    """The path of the block a step lives in; a block's own block only when one of its owner's blocks made it."""
    block, owner = record.get("block_path") or None, record.get("parent_path")
    if block and is_block and owner and not block.startswith(owner + "/"):
        return None  # a step's body or catch block: it hangs off the step (container), not off a block
    return block


def step_op(record: StepRecord) -> MirrorOp:
    """steps: one per step path per run, contained by the nearest enclosing step (the root at the top)."""
    _require(record, "workflow_id", "run_id", "path")
    wf, run, path = record["workflow_id"], record["run_id"], record["path"]
    lifecycle = _lifecycle(record, "created")
    object_type = object_type_of(record)
    is_block = object_type in schema.BLOCK_TYPES
    owner, block = record.get("parent_path"), _block_of(record, object_type in schema.BLOCK_TYPES)
    op = _step_base(wf, run, path, object_type, lifecycle, _time(record))
    if not record.get("object_type"):  # a record that omits it (a failure) never overwrites a known type
        op.set_on_insert.update({key: op.set.pop(key) for key in ("object_type", "is_block")})
    op.set.update({
        "container_type": "VariableAssignment" if owner else "Workflow",
        "container_id": ids.step_uuid(wf, run, owner) if owner else ids.root_step_uuid(wf, run),
        "block_id": ids.step_uuid(wf, run, block) if block else None,
        "root_id": ids.root_step_uuid(wf, run),
        "is_starting_step": False,
        "statement_name": "" if is_block else _last(path),
    })  # fmt: skip
    if record.get("program_hash"):
        op.set["flow_id"] = op.set["flow_definition_id"] = ids.flow_uuid(record["program_hash"])
    # Records of one step may omit these (a failure record); a blank never overwrites a known value.
    if record.get("statement_id"):
        op.set["statement_id"] = record["statement_id"]
    if record.get("facet"):
        op.set["facet_name"] = op.set["facets.name"] = record["facet"]
    if record.get("foreach") is not None:  # an iteration block: its variable and element
        var, value = record["foreach"]
        op.set["foreach_var"], op.set["foreach_value"] = var, value
    _step_values(op, lifecycle, record.get("params"), record.get("returns"),
                 _error(record.get("error"), record.get("error_type")))  # fmt: skip
    return op


def _owner_op(wf: str, run: str, owner: str | None, lifecycle: str, time: int) -> MirrorOp:
    """The state a record implies for the step owning it; never creates that step's document."""
    path = owner or ids.ROOT_PATH
    op = MirrorOp(schema.STEPS, ids.step_uuid(wf, run, path), rank=schema.STEP_RANK[lifecycle], time=time,
                  upsert=False)  # fmt: skip
    op.max = {"timestamp.updated": time, "last_modified": time}
    op.guarded = {"state": schema.step_state(lifecycle, "Workflow" if owner is None else "VariableAssignment"),
                  "lifecycle": lifecycle}  # fmt: skip
    return op


_STEP_WORDS = {"created": "created", "running": "started", "waiting": "waits for its handler",
               "blocks": "runs its blocks", "catching": "runs its catch block", "completed": "completed",
               "caught": "completed by its catch block", "failed": "failed", "cancelled": "cancelled"}  # fmt: skip
_LEVEL_OF = {"completed": "success", "caught": "success", "failed": "error", "cancelled": "warning"}


def _state_entry(record: Mapping[str, Any], path: str, lifecycle: str, object_type: str, facet: str | None,
                 error: dict[str, Any] | None, extra: str = "") -> MirrorOp:
    """The ``step_logs`` entry of one state change of the step at ``path``, once per (step, lifecycle)."""
    wf, run = record["workflow_id"], record["run_id"]
    state = schema.step_state(lifecycle, object_type)
    what = "Block" if object_type in schema.BLOCK_TYPES else "Workflow" if object_type == "Workflow" else "Step"
    message = f"{what} {_STEP_WORDS[lifecycle]}{extra}"
    if error:
        message += f": {_error_text(error)}"
    step = ids.step_uuid(wf, run, path)
    details = {"path": path, "change": "state", "lifecycle": lifecycle}
    return entries.step_log_entry(
        ids.log_uuid("step-state", step, lifecycle), workflow_id=wf, run_id=run, path=path, facet=facet,
        source="framework", level=_LEVEL_OF.get(lifecycle, "info"), message=f"{message} ({state})", state=state,
        details=details, time=_time(record), order=entries.workflow_order(record))  # fmt: skip


def _state_log(record: Mapping[str, Any], op: MirrorOp, subject: str, state: str, message: str, *,
               step_path: str | None, attempt: int = 0, agent: bool = False, sub: int | None = None) -> MirrorOp:
    """The ``logs`` entry for the state change a runner, step or task record reports."""
    wf, run = record["workflow_id"], record["run_id"]
    error = op.guarded.get("error")
    if error:
        message += f": {error.get('message', '')}"
    failed = state in ("failed", schema.StepState.ERROR)
    details = {"temporal_workflow_id": wf, "temporal_run_id": run, "path": record.get("path") or
               record.get("activity_id") or "", "change": "state", **({"attempt": attempt} if attempt else {})}
    if subject == "step":
        details["lifecycle"] = op.guarded.get("lifecycle")
    return entries.log_entry(
        ids.log_uuid("state", op.collection, op.uuid, op.guarded.get("lifecycle", state), attempt),
        runner_id=ids.runner_uuid(wf, run), step_id=ids.step_uuid(wf, run, step_path) if step_path is not None else None,
        object_id=op.uuid, object_type=subject, originator="agent" if agent else "workflow",
        note_type="error" if failed else "info", importance=1 if failed else 10, message=message, state=state,
        details=details, time=op.time, order=None if agent else entries.workflow_order(record), sub=sub)  # fmt: skip


def step_ops(record: StepRecord) -> list[Any]:
    op = step_op(record)
    wf, run, path = record["workflow_id"], record["run_id"], record["path"]
    lifecycle, object_type = op.guarded["lifecycle"], object_type_of(record)
    facet = record.get("facet") or None
    error = op.guarded.get("error")
    label = f"step {path} ({facet or object_type})"
    ops: list[Any] = [op, _state_log(record, op, "step", op.guarded["state"], f"{label} {lifecycle}", step_path=path),
                      _state_entry(record, path, lifecycle, object_type, facet, error)]  # fmt: skip
    if object_type in schema.BLOCK_TYPES and lifecycle == "running":
        owner = record.get("parent_path")
        inner = path[len(owner) + 1:] if owner else path  # the block's path below its owner step
        implied = "catching" if inner.split("/", 1)[0] == "catch" else "blocks"
        owner_path = owner or ids.ROOT_PATH
        ops.append(_owner_op(wf, run, owner, implied, op.time))
        ops.append(_state_entry(record, owner_path, implied, "Workflow" if owner is None else "VariableAssignment",
                                None, None, f" ({_last(path)})"))  # fmt: skip
    return ops


# --------------------------------------------------------------------------- runners


def runner_op(record: RunnerRecord) -> MirrorOp:
    """runners: one per Temporal run; ``workflow_id`` names the run's own workflows document."""
    _require(record, "workflow_id", "run_id")
    wf, run = record["workflow_id"], record["run_id"]
    state = schema.STATE_ALIASES.get(record.get("state") or "running", record.get("state") or "running")
    if state not in schema.RUNNER_RANK:
        raise RecordError(f"unknown runner state {state!r}")
    time = _time(record)
    program_hash = record.get("program_hash") or ""
    qname = record.get("workflow") or ""
    op = MirrorOp(schema.RUNNERS, ids.runner_uuid(wf, run), time=time, rank=schema.RUNNER_RANK[state])
    op.set = {"workflow_id": ids.run_workflow_uuid(wf, run), "temporal_workflow_id": wf, "temporal_run_id": run,
              "step_id": ids.root_step_uuid(wf, run)}  # fmt: skip
    definition = {f"workflow.{k}": v for k, v in _run_definition(wf, run, qname, program_hash).items()}
    if qname:
        op.set.update(definition)
        op.set["workflow_name"] = qname
    else:  # a record without the name never blanks it
        op.set_on_insert.update(definition)
    op.min["workflow.date"] = time
    op.set_on_insert.update({"workflow.metadata": None, "workflow.documentation": None})
    if program_hash:
        op.set["flow_id"] = ids.flow_uuid(program_hash)
        op.set["program_hash"] = program_hash
    op.set_on_insert.update({
        "parameters": [], "user": None, "end_time": 0, "duration": 0, "retain": 0, "state": "created",
        "compiled_ast": None, "workflow_ast": None, "returns": None, "error": None, "flow_id": "",
        "workflow_name": "", "program_hash": "",
    })  # fmt: skip
    op.min["start_time"] = time
    op.max["updated"] = time
    op.guarded = {"state": state}
    if record.get("params") is not None:  # a run's inputs never change: no guard needed
        op.set["parameters"] = parameters(record["params"])
    if record.get("returns") is not None:
        op.guarded["returns"] = record["returns"]
    if state in schema.FINISHED_RUNNER_STATES:
        op.max["end_time"] = time
        op.guarded["error"] = _error(record.get("error"), record.get("error_type"))
    return op


def run_workflow_op(record: RunnerRecord, runner: MirrorOp) -> MirrorOp | None:
    """workflows: the run's own definition (as the original writes one per submission), named by the runner."""
    qname = record.get("workflow") or ""
    if not qname:
        return None
    wf, run = record["workflow_id"], record["run_id"]
    program_hash = record.get("program_hash") or ""
    definition = _run_definition(wf, run, qname, program_hash)
    op = MirrorOp(schema.WORKFLOWS, definition["uuid"], time=runner.time)
    op.set = {**definition, "definition_id": ids.workflow_uuid(program_hash, qname), "runner_id": runner.uuid,
              "temporal_workflow_id": wf, "temporal_run_id": run}  # fmt: skip
    op.set_on_insert = {"metadata": None, "documentation": None}
    op.min = {"date": runner.time}
    return op


def root_op(record: RunnerRecord, runner: MirrorOp) -> MirrorOp:
    """The run's root step: object type Workflow, no container, no root; every other step hangs below it."""
    wf, run = record["workflow_id"], record["run_id"]
    lifecycle = schema.RUNNER_TO_ROOT[runner.guarded["state"]]
    op = _step_base(wf, run, ids.ROOT_PATH, "Workflow", lifecycle, runner.time)
    qname = record.get("workflow") or None
    op.set.update({"container_type": None, "container_id": None, "block_id": None, "root_id": None,
                   "is_starting_step": True, "statement_name": "", "statement_id": None})  # fmt: skip
    if qname:
        op.set["facet_name"] = op.set["facets.name"] = qname
    if record.get("program_hash"):
        op.set["flow_id"] = op.set["flow_definition_id"] = ids.flow_uuid(record["program_hash"])
    _step_values(op, lifecycle, record.get("params"), record.get("returns"), runner.guarded.get("error"))
    return op


def _close_open_steps(record: RunnerRecord, runner: MirrorOp) -> list[MirrorSweep]:
    """A failed or cancelled run's end: steps it left open end with it; a cancelled run's tasks are canceled."""
    state = runner.guarded["state"]
    if state not in ("failed", "cancelled"):
        return []
    lifecycle = "cancelled" if state == "cancelled" else "failed"
    error = {"message": "cancelled with its run" if state == "cancelled" else "stopped: its run failed"}
    rank = schema.STEP_RANK[lifecycle]
    sweeps = [MirrorSweep(schema.STEPS, {
        "runner_id": runner.uuid, "lifecycle": {"$nin": sorted(schema.FINISHED_LIFECYCLES)},
        f"{MIRROR_FIELD}.key": {"$not": {"$gte": guard_key(rank, 0)}}},
        {"$set": {"state": schema.StepState.ERROR, "lifecycle": lifecycle, "error": error,
                  "timestamp.completed": runner.time, f"{MIRROR_FIELD}.rank": rank,
                  f"{MIRROR_FIELD}.time": runner.time, f"{MIRROR_FIELD}.key": guard_key(rank, runner.time)},
         "$max": {"last_modified": runner.time, "timestamp.updated": runner.time}})]  # fmt: skip
    if state == "cancelled":
        sweeps.append(MirrorSweep(schema.TASKS, {"runner_id": runner.uuid, "state": {"$in": ["pending", "running"]}},
                                  {"$set": {"state": "canceled"}, "$max": {"updated": runner.time}}))  # fmt: skip
    return sweeps


def runner_ops(record: RunnerRecord) -> list[Any]:
    runner = runner_op(record)
    root = root_op(record, runner)
    state = runner.guarded["state"]
    ops: list[Any] = [runner]
    definition = run_workflow_op(record, runner)
    if definition is not None:
        ops.append(definition)
    ops += [root, _state_log(record, runner, "runner", state, f"runner {record.get('workflow') or record['workflow_id']} "
                             f"{state}", step_path=None),
            _state_entry(record, ids.ROOT_PATH, root.guarded["lifecycle"], "Workflow", record.get("workflow"),
                         root.guarded.get("error") if state in schema.FINISHED_RUNNER_STATES else None)]  # fmt: skip
    return ops + _close_open_steps(record, runner)


# --------------------------------------------------------------------------- tasks


def task_op(record: ScheduledTaskRecord | TaskRecord) -> MirrorOp:
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
        "workflow_id": ids.run_workflow_uuid(wf, run),
        "temporal_workflow_id": wf,
        "temporal_run_id": run,
        "step_id": ids.step_uuid(wf, run, act),
        "activity_id": act,
        "task_list_name": record.get("queue") or "default",
    }
    if record.get("program_hash"):  # the workflow's pending record knows the program
        op.set["flow_id"] = ids.flow_uuid(record["program_hash"])
    if state == "pending" and record.get("seq") is not None:  # where its handler's log entries sort
        op.set[f"{MIRROR_FIELD}.anchor"] = int(record["seq"])
    op.set_on_insert = {"flow_id": "", "state": "pending", "error": None, "data_type": "json", "data": {},
                        "server_id": "", "task_heartbeat": 0, "returns": None}  # fmt: skip
    op.min = {"created": time}
    op.max = {"updated": time}
    op.guarded = {
        "state": state,
        "attempt": attempt,
        "retry_count": attempt - 1,
        "error": _error(record.get("error"), record.get("error_type")) if state == "failed" else None,
    }
    if record.get("server_id"):
        op.guarded["server_id"] = record["server_id"]
    if state != "pending":
        op.max["task_heartbeat"] = time
    for key in ("progress_pct", "progress_message", "task_token"):  # task_token: it completes later (ffl complete)
        if record.get(key) is not None:
            op.set[key] = record[key]
    payload = record.get("payload") if record.get("payload") is not None else record.get("params")
    if payload is not None:  # the original's task data: the event's payload (= the step's arguments)
        op.set["data"] = payload
    if record.get("returns") is not None:
        op.guarded["returns"] = record["returns"]
    return op


def _agent_sub(record: Mapping[str, Any]) -> int:
    return entries.agent_sub(int(record.get("attempt") or 1), int(record.get("index") or 0))


_TASK_WORDS = {"running": "Task claimed", "completed": "Handler completed", "failed": "Handler failed",
               "ignored": "Task ignored", "canceled": "Task canceled"}  # fmt: skip


def task_ops(record: ScheduledTaskRecord | TaskRecord) -> list[Any]:
    op = task_op(record)
    wf, run, act = record["workflow_id"], record["run_id"], record["activity_id"]
    state, attempt = op.guarded["state"], op.guarded["attempt"]
    facet = record.get("facet") or ""
    message = f"task {facet} for step {act} {state}" + (f" (attempt {attempt})" if attempt > 1 else "")
    agent = state != "pending"
    sub = _agent_sub(record) if agent else None
    ops: list[Any] = [op, _state_log(record, op, "task", state, message, step_path=act, attempt=attempt, agent=agent,
                                     sub=sub)]  # fmt: skip
    if not agent:  # the workflow scheduled the handler: the step waits on it, with its arguments
        waiting = _owner_op(wf, run, act, "waiting", op.time)
        if record.get("params") is not None:
            params = record["params"]
            waiting.set = {"parameters": parameters(params), "facets.params": params,
                           "attributes.params": attributes(params)}  # fmt: skip
        ops.append(waiting)
        ops.append(_state_entry(record, act, "waiting", "VariableAssignment", facet or None, None,
                                f" (task {facet} on queue {op.set['task_list_name']})"))  # fmt: skip
        return ops
    words = _TASK_WORDS.get(state, f"Task {state}")
    where = f"attempt {attempt}" + (f", server {record['server_id'][:8]}" if record.get("server_id") else "")
    text = f"{words}: {facet} ({where})"
    if op.guarded.get("error"):
        text += f": {_error_text(op.guarded['error'])}"
    level = {"completed": "success", "failed": "error"}.get(state, "info")
    ops.append(entries.step_log_entry(
        ids.log_uuid("step-task", op.uuid, state, attempt), workflow_id=wf, run_id=run, path=act, facet=facet,
        source="framework", level=level, message=text, state=state,
        details={"path": act, "change": "task", "attempt": attempt, "server_id": record.get("server_id") or ""},
        time=op.time, order=None, sub=sub))  # fmt: skip
    return ops


# --------------------------------------------------------------------------- log lines


def _line_details(record: Mapping[str, Any], path: str) -> dict[str, Any]:
    details = {"temporal_workflow_id": record["workflow_id"], "temporal_run_id": record["run_id"], "path": path}
    if record.get("facet"):
        details["facet"] = record["facet"]
    if isinstance(record.get("details"), dict):
        details.update(record["details"])
    return details


def log_ops(record: LogRecord) -> list[Any]:
    """A workflow log line: ``logs`` (originator workflow) and the step's (or the root's) ``step_logs``."""
    _require(record, "workflow_id", "run_id")
    wf, run, path = record["workflow_id"], record["run_id"], record.get("path") or ""
    time = _time(record)
    level = str(record.get("level") or "info").lower()
    note_type, importance = entries.NOTE_LEVELS.get(level, ("info", 5))
    message = str(record.get("message", ""))
    step = ids.step_uuid(wf, run, path) if path else None
    uuid = ids.log_uuid("workflow", wf, run, path, time, level, message)
    order = entries.workflow_order(record)
    details = _line_details(record, path)
    return [
        entries.log_entry(uuid, runner_id=ids.runner_uuid(wf, run), step_id=step,
                          object_id=step or ids.runner_uuid(wf, run), object_type="step" if path else "runner",
                          originator="workflow", note_type=note_type, importance=importance, message=message,
                          state=record.get("state") or "", details=details, time=time, order=order,
                          line=int(record.get("line") or 0), file=record.get("file") or ""),
        entries.step_log_entry(ids.log_uuid("step-line", uuid), workflow_id=wf, run_id=run, path=path,
                               facet=record.get("facet"), source="framework",
                               level=entries.STEP_LOG_LEVELS.get(level, "info"), message=message, state="",
                               details=details, time=time, order=order),
    ]  # fmt: skip


def task_log_ops(record: TaskLogRecord) -> list[Any]:
    """A handler's ``_step_log`` line: ``logs`` (originator agent, object the task) and the step's ``step_logs``."""
    _require(record, "workflow_id", "run_id", "activity_id")
    wf, run, act = record["workflow_id"], record["run_id"], record["activity_id"]
    time = _time(record)
    level = str(record.get("level") or "info").lower()
    note_type, importance = entries.NOTE_LEVELS.get(level, ("info", 5))
    message = str(record.get("message", ""))
    attempt, index = int(record.get("attempt") or 1), int(record.get("index") or 0)
    uuid = ids.log_uuid("agent", wf, run, act, time, level, message, attempt, index)
    sub = _agent_sub(record)
    details = _line_details(record, act)
    return [
        entries.log_entry(uuid, runner_id=ids.runner_uuid(wf, run), step_id=ids.step_uuid(wf, run, act),
                          object_id=ids.task_uuid(wf, run, act), object_type="task", originator="agent",
                          note_type=note_type, importance=importance, message=message, state="", details=details,
                          time=time, order=None, sub=sub),
        entries.step_log_entry(ids.log_uuid("step-line", uuid), workflow_id=wf, run_id=run, path=act,
                               facet=record.get("facet"), source="handler",
                               level=entries.STEP_LOG_LEVELS.get(level, "info"), message=message, state="",
                               details=details, time=time, order=None, sub=sub),
    ]  # fmt: skip


# --------------------------------------------------------------------------- servers


def server_op(record: Mapping[str, Any]) -> MirrorOp:
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


BUILDERS = {"runner": runner_ops, "step": step_ops, "log": log_ops, "task": task_ops, "task_log": task_log_ops,
            "server": lambda record: [server_op(record)]}  # fmt: skip


def build_ops(record: MirrorRecord) -> list[Any]:
    """The ops for one record: its document first, then its entries and the documents it implies.

    Raises RecordError for a record that cannot be mirrored.
    """
    if not isinstance(record, dict):
        raise RecordError(f"not a record: {record!r:.200}")
    builder = BUILDERS.get(record.get("kind", ""))
    if builder is None:
        raise RecordError(f"unknown record kind {record.get('kind')!r}")
    try:
        return builder(record)
    except (TypeError, ValueError, KeyError) as exc:
        if isinstance(exc, RecordError):
            raise
        raise RecordError(f"bad {record.get('kind')} record: {exc}") from exc
