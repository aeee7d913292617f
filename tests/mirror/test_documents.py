"""Record → document builders: the original runtime's names, shapes and vocabulary, with deterministic ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interpreter.activities.mirror import RecordError, build_ops, ids
from interpreter.activities.mirror.entries import ORDER_SLOT, agent_sub
from interpreter.activities.mirror.ops import MirrorOp, MirrorSweep

T0 = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
T0_MS = 1714564800250
WF, RUN = "wf", "r"
ROOT = ids.root_step_uuid(WF, RUN)


def step_id(path: str) -> str:
    return ids.step_uuid(WF, RUN, path)


def ops_of(record: dict) -> dict[tuple[str, str], object]:
    """The ops of one record by (collection, uuid); sweeps by (collection, "sweep")."""
    found = {}
    for op in build_ops(record):
        found[(op.collection, "sweep" if isinstance(op, MirrorSweep) else op.uuid)] = op
    return found


def doc(record: dict, collection: str, uuid: str) -> dict:
    return ops_of(record)[(collection, uuid)].preview()


def step(path: str, state: str, **more) -> dict:
    return {"kind": "step", "workflow_id": WF, "run_id": RUN, "path": path, "state": state, "time": T0, "seq": 7,
            **more}


def runner(state: str, **more) -> dict:
    return {"kind": "runner", "workflow_id": WF, "run_id": RUN, "workflow": "calc.Add", "state": state,
            "program_hash": "abc123", "time": T0, "seq": 0, **more}


def test_to_ms_accepts_datetimes_iso_strings_and_numbers() -> None:
    assert ids.to_ms(T0) == T0_MS
    assert ids.to_ms(T0.replace(tzinfo=None)) == T0_MS
    assert ids.to_ms("2024-05-01T12:00:00.250Z") == T0_MS
    assert ids.to_ms("2024-05-01T14:00:00.250+02:00") == T0_MS
    assert ids.to_ms(T0_MS) == T0_MS
    assert ids.to_ms(None) is None


def test_a_runner_names_its_own_workflow_document_and_its_root_step() -> None:
    record = runner("running", params={"a": 1, "b": 2})
    found = ops_of(record)
    doc = found[("runners", ids.runner_uuid(WF, RUN))].preview()
    assert doc["uuid"] == doc["_id"]
    own = ids.run_workflow_uuid(WF, RUN)
    assert doc["workflow_id"] == own and (doc["temporal_workflow_id"], doc["temporal_run_id"]) == (WF, RUN)
    assert doc["step_id"] == ROOT and doc["state"] == "running"
    assert doc["parameters"] == [{"name": "a", "value": 1}, {"name": "b", "value": 2}]
    assert doc["start_time"] == T0_MS and doc["end_time"] == 0 and doc["duration"] == doc["retain"] == 0
    assert doc["user"] is None and doc["compiled_ast"] is None and doc["workflow_ast"] is None
    assert doc["flow_id"] == ids.flow_uuid("abc123") and doc["workflow_name"] == "calc.Add"
    assert doc["workflow"] == {"uuid": own, "name": "calc.Add", "namespace_id": "calc", "facet_id": "calc.Add",
                               "flow_id": doc["flow_id"], "starting_step": ROOT, "version": "abc123",
                               "metadata": None, "documentation": None, "date": T0_MS}  # fmt: skip
    definition = found[("workflows", own)].preview()
    assert {k: definition[k] for k in doc["workflow"]} == doc["workflow"]
    assert definition["definition_id"] == ids.workflow_uuid("abc123", "calc.Add")
    assert definition["runner_id"] == doc["uuid"] and definition["temporal_workflow_id"] == WF

    root = found[("steps", ROOT)].preview()
    assert (root["object_type"], root["path"], root["facet_name"]) == ("Workflow", "", "calc.Add")
    assert root["container_id"] is root["root_id"] is root["block_id"] is root["statement_id"] is None
    assert root["is_starting_step"] is True and root["is_block"] is False and root["runner_id"] == doc["uuid"]
    assert (root["state"], root["lifecycle"]) == ("state.facet.initialization.Begin", "running")
    assert root["attributes"]["params"] == {"a": {"name": "a", "value": 1, "type_hint": "Long"},
                                            "b": {"name": "b", "value": 2, "type_hint": "Long"}}  # fmt: skip
    assert root["workflow_id"] == own and root["start_time"] == root["last_modified"] == T0_MS
    entries = [op for (collection, _), op in found.items() if collection in ("logs", "step_logs")]
    assert sorted(e.collection for e in entries) == ["logs", "step_logs"]
    assert all(e.preview()["order"] == 0 for e in entries)


def test_a_finished_runner_ends_its_root_and_closes_what_its_run_left_open() -> None:
    found = ops_of(runner("failed", error="boom", seq=9))
    doc = found[("runners", ids.runner_uuid(WF, RUN))].preview()
    assert doc["state"] == "failed" and doc["end_time"] == T0_MS and doc["error"] == {"message": "boom"}
    root = found[("steps", ROOT)].preview()
    assert (root["state"], root["lifecycle"], root["error"]) == ("state.statement.Error", "failed", {"message": "boom"})
    sweep = found[("steps", "sweep")]
    assert sweep.filter["runner_id"] == doc["uuid"] and "completed" in sweep.filter["lifecycle"]["$nin"]
    assert sweep.update["$set"]["state"] == "state.statement.Error"
    assert ("tasks", "sweep") not in found
    cancelled = ops_of(runner("cancelled", error="cancelled"))
    assert cancelled[("steps", ROOT)].preview()["lifecycle"] == "cancelled"
    assert cancelled[("tasks", "sweep")].update["$set"] == {"state": "canceled"}
    assert ("steps", "sweep") not in ops_of(runner("completed", returns={"sum": 3}))


def test_a_call_step_is_a_statement_of_its_block_contained_by_the_root() -> None:
    record = step("b0/s1", "completed", statement_id="calc.Add/b0/s1", facet="calc.Sum",
                  object_type="VariableAssignment", parent_path=None, block_path="b0", params={"x": 1},
                  returns={"y": 2.5}, program_hash="abc123")  # fmt: skip
    doc = ops_of(record)[("steps", step_id("b0/s1"))].preview()
    assert doc["runner_id"] == ids.runner_uuid(WF, RUN) and doc["workflow_id"] == ids.run_workflow_uuid(WF, RUN)
    assert (doc["container_type"], doc["container_id"], doc["root_id"]) == ("Workflow", ROOT, ROOT)
    assert doc["block_id"] == step_id("b0") and doc["statement_id"] == "calc.Add/b0/s1"
    assert (doc["statement_name"], doc["facet_name"], doc["is_block"]) == ("s1", "calc.Sum", False)
    assert (doc["state"], doc["lifecycle"]) == ("state.statement.Complete", "completed")
    assert doc["parameters"] == [{"name": "x", "value": 1}]
    assert doc["facets"] == {"name": "calc.Sum", "params": {"x": 1}, "returns": {"y": 2.5}}
    assert doc["attributes"]["returns"] == {"y": {"name": "y", "value": 2.5, "type_hint": "Double"}}
    assert doc["flow_id"] == doc["flow_definition_id"] == ids.flow_uuid("abc123")
    assert doc["timestamp"] == {"created": T0_MS, "started": T0_MS, "completed": T0_MS, "updated": T0_MS}
    assert doc["start_time"] == doc["last_modified"] == T0_MS and doc["error"] is None
    assert doc["is_starting_step"] is False and doc["lock_status"] == "" and doc["extra_data"] is None
    assert doc["temporal_workflow_id"] == WF and doc["path"] == "b0/s1"


def test_a_nested_step_is_contained_by_its_owner_step() -> None:
    doc = ops_of(step("b0/r/b0/p", "running", facet="b.Plus", parent_path="b0/r", block_path="b0/r/b0"))
    doc = doc[("steps", step_id("b0/r/b0/p"))].preview()
    assert (doc["container_type"], doc["container_id"]) == ("VariableAssignment", step_id("b0/r"))
    assert doc["block_id"] == step_id("b0/r/b0") and doc["root_id"] == ROOT
    assert (doc["state"], doc["lifecycle"]) == ("state.facet.initialization.Begin", "running")


@pytest.mark.parametrize("path, object_type, parent, block, expect_type, expect_block, owner_lifecycle", [
    ("b0", "AndThen", None, "", "AndThen", None, "blocks"),
    ("b0", "AndMap", None, "", "AndMap", None, "blocks"),
    ("b0/foreach[2]", "AndThen", None, "b0", "AndThen", "b0", "blocks"),
    ("b1", "AndMatch", None, "", "AndWhen", None, "blocks"),
    ("b1/c0", "AndThen", None, "b1", "AndThen", "b1", "blocks"),
    ("b0/s/b0", "AndThen", "b0/s", "b0", "AndThen", None, "blocks"),
    ("b0/s/b0/foreach[0]", "AndThen", "b0/s", "b0/s/b0", "AndThen", "b0/s/b0", "blocks"),
    ("b0/s/catch", "AndThen", "b0/s", "b0", "AndCatch", None, "catching"),
    ("b0/s/catch", "AndMatch", "b0/s", "b0", "AndCatch", None, "catching"),
    ("b0/s/catch/c1", "AndThen", "b0/s", "b0/s/catch", "AndThen", "b0/s/catch", "catching"),
    ("catch", "AndThen", None, "", "AndCatch", None, "catching"),
])  # fmt: skip
def test_blocks_hang_off_their_owner_and_put_it_in_their_state(path, object_type, parent, block, expect_type,
                                                               expect_block, owner_lifecycle) -> None:
    found = ops_of(step(path, "running", object_type=object_type, parent_path=parent, block_path=block))
    doc = found[("steps", step_id(path))].preview()
    owner = step_id(parent) if parent else ROOT
    assert (doc["object_type"], doc["is_block"], doc["container_id"]) == (expect_type, True, owner)
    assert doc["block_id"] == (step_id(expect_block) if expect_block else None)
    assert doc["statement_id"] is None and doc["statement_name"] == "" and doc["root_id"] == ROOT
    assert (doc["state"], doc["lifecycle"]) == ("state.block.execution.Continue", "running")
    implied = found[("steps", owner)]
    assert isinstance(implied, MirrorOp) and not implied.upsert  # never creates the owner
    states = {"blocks": "state.statement.blocks.Continue", "catching": "state.statement.catch.Begin"}
    assert implied.guarded == {"state": states[owner_lifecycle], "lifecycle": owner_lifecycle}
    assert [u for u in implied.updates() if u[2]] == []
    messages = [op.preview()["message"] for (c, _), op in found.items() if c == "step_logs"]
    assert len(messages) == 2 and any(states[owner_lifecycle] in m for m in messages)


def test_an_iteration_block_carries_its_variable_and_element_and_a_yield_its_target() -> None:
    doc = ops_of(step("b0/foreach[1]", "running", object_type="AndThen", block_path="b0", foreach=["city", "oslo"]))
    doc = doc[("steps", step_id("b0/foreach[1]"))].preview()
    assert (doc["foreach_var"], doc["foreach_value"]) == ("city", "oslo")
    found = ops_of(step("b0/yield Main", "completed", object_type="YieldAssignment", block_path="b0", facet="m.Main",
                        returns={"total": 3}))  # fmt: skip
    yielded = found[("steps", step_id("b0/yield Main"))].preview()
    assert (yielded["object_type"], yielded["facet_name"], yielded["statement_name"]) == (
        "YieldAssignment", "m.Main", "yield Main")
    assert yielded["block_id"] == step_id("b0") and yielded["state"] == "state.statement.Complete"
    assert ("steps", ROOT) not in found  # a yield implies nothing for its owner


def test_a_scheduled_task_puts_its_step_in_event_transmit() -> None:
    record = {"kind": "task", "workflow_id": WF, "run_id": RUN, "activity_id": "b0/s1", "facet": "ns.Ev",
              "queue": "ns", "attempt": 1, "state": "pending", "program_hash": "abc123", "time": T0, "seq": 12,
              "params": {"a": "x"}}  # fmt: skip
    found = ops_of(record)
    task = found[("tasks", ids.task_uuid(WF, RUN, "b0/s1"))].preview()
    assert task["workflow_id"] == ids.run_workflow_uuid(WF, RUN) and task["step_id"] == step_id("b0/s1")
    assert (task["state"], task["server_id"], task["task_heartbeat"], task["_mirror"]["anchor"]) == ("pending", "",
                                                                                                     0, 12)
    assert task["data"] == {"a": "x"}
    implied = found[("steps", step_id("b0/s1"))]
    assert not implied.upsert and implied.guarded == {"state": "state.EventTransmit", "lifecycle": "waiting"}
    # the step's arguments, known once its handler is scheduled (a failed or caught step keeps them)
    assert implied.set["parameters"] == [{"name": "a", "value": "x"}] and implied.set["facets.params"] == {"a": "x"}
    assert implied.set["attributes.params"] == {"a": {"name": "a", "value": "x", "type_hint": "String"}}
    log = next(op.preview() for (c, _), op in found.items() if c == "logs")
    assert (log["order"], log["note_originator"], log["state"]) == (12 * ORDER_SLOT, "workflow", "pending")
    entry = next(op.preview() for (c, _), op in found.items() if c == "step_logs")
    assert entry["step_id"] == step_id("b0/s1") and "state.EventTransmit" in entry["message"]
    assert entry["order"] == 12 * ORDER_SLOT and entry["level"] == "info"


def test_a_handler_attempt_carries_its_server_and_waits_for_its_order() -> None:
    record = {"kind": "task", "workflow_id": WF, "run_id": RUN, "activity_id": "b0/s1", "facet": "ns.Ev",
              "queue": "ns", "attempt": 3, "state": "failed", "payload": {"a": 1}, "returns": None,
              "error": "nope", "error_type": "ValueError", "time": T0_MS, "server_id": "srv-1", "index": 2,
              "progress_pct": 40}  # fmt: skip
    found = ops_of(record)
    task = found[("tasks", ids.task_uuid(WF, RUN, "b0/s1"))].preview()
    assert (task["state"], task["attempt"], task["retry_count"]) == ("failed", 3, 2)
    assert task["error"] == {"message": "nope", "type": "ValueError"}
    assert task["server_id"] == "srv-1" and task["task_heartbeat"] == T0_MS and task["progress_pct"] == 40
    assert task["data"] == {"a": 1} and task["data_type"] == "json" and task["flow_id"] == ""
    assert ("steps", step_id("b0/s1")) not in found  # the step's states come from the workflow
    log = next(op.preview() for (c, _), op in found.items() if c == "logs")
    assert (log["note_originator"], log["note_type"], log["note_importance"]) == ("agent", "error", 1)
    assert log["order"] is None and log["_mirror"]["sub"] == agent_sub(3, 2)
    entry = next(op.preview() for (c, _), op in found.items() if c == "step_logs")
    assert entry["message"] == "Handler failed: ns.Ev (attempt 3, server srv-1): ValueError: nope"
    assert entry["level"] == "error" and entry["order"] is None and entry["source"] == "framework"


def test_log_lines_go_to_logs_and_to_their_steps_logs() -> None:
    found = ops_of({"kind": "log", "workflow_id": WF, "run_id": RUN, "path": "b0/s1", "message": "hi", "time": T0,
                    "seq": 4})  # fmt: skip
    log = next(op.preview() for (c, _), op in found.items() if c == "logs")
    assert log["runner_id"] == ids.runner_uuid(WF, RUN)
    assert log["step_id"] == log["object_id"] == step_id("b0/s1") and log["object_type"] == "step"
    assert (log["note_originator"], log["note_type"], log["note_importance"]) == ("workflow", "info", 5)
    assert log["message"] == "hi" and log["time"] == T0_MS and log["order"] == 4 * ORDER_SLOT
    assert log["line"] == 0 and log["file"] == "" and log["details"]["path"] == "b0/s1"
    entry = next(op.preview() for (c, _), op in found.items() if c == "step_logs")
    assert (entry["step_id"], entry["message"], entry["source"]) == (step_id("b0/s1"), "hi", "framework")
    runner_line = ops_of({"kind": "log", "workflow_id": WF, "run_id": RUN, "path": "", "message": "workflow cancelled",
                          "time": T0, "seq": 5})  # fmt: skip
    assert next(op.preview() for (c, _), op in runner_line.items() if c == "step_logs")["step_id"] == ROOT
    agent = ops_of({"kind": "task_log", "workflow_id": WF, "run_id": RUN, "activity_id": "s1", "facet": "n.E",
                    "message": "bad", "level": "WARNING", "time": T0, "attempt": 2, "index": 1,
                    "details": {"rows": 3}})  # fmt: skip
    line = next(op.preview() for (c, _), op in agent.items() if c == "logs")
    assert line["note_originator"] == "agent" and line["note_type"] == "warning" and line["note_importance"] == 5
    assert line["object_id"] == ids.task_uuid(WF, RUN, "s1") and line["object_type"] == "task"
    assert line["order"] is None and line["details"]["rows"] == 3
    entry = next(op.preview() for (c, _), op in agent.items() if c == "step_logs")
    assert (entry["source"], entry["level"], entry["details"]["rows"]) == ("handler", "warning", 3)


def test_server_document_has_the_schema_fields() -> None:
    record = {"kind": "server", "uuid": "srv-1", "server_group": "ffl", "service_name": "worker",
              "server_name": "host-a", "server_ips": ["10.0.0.1"], "topics": ["ffl", "osm"],
              "handlers": ["osm.Download"], "state": "startup", "start_time": T0, "time": T0}  # fmt: skip
    doc = build_ops(record)[0].preview()
    assert doc["uuid"] == "srv-1"
    assert (doc["server_group"], doc["service_name"], doc["server_name"]) == ("ffl", "worker", "host-a")
    assert doc["server_ips"] == ["10.0.0.1"] and doc["topics"] == ["ffl", "osm"]
    assert doc["handlers"] == ["osm.Download"] and doc["handled"] == []
    assert doc["start_time"] == T0_MS and doc["ping_time"] == T0_MS
    assert doc["state"] == "startup" and doc["manager"] == "" and doc["error"] is None


def test_ids_are_deterministic_and_distinct() -> None:
    a = build_ops(step("p", "running"))[0]
    b = build_ops({**step("p", "completed"), "time": T0_MS + 5})[0]
    c = build_ops({**step("p", "running"), "run_id": "r2"})[0]
    assert a.uuid == b.uuid != c.uuid
    assert ids.step_uuid("w", "r", "p") != ids.task_uuid("w", "r", "p")
    assert ids.run_workflow_uuid("w", "r") not in (ids.runner_uuid("w", "r"), ids.root_step_uuid("w", "r"))


@pytest.mark.parametrize("state, lifecycle", [("cancelled", "cancelled"), ("canceled", "cancelled"),
                                              ("caught", "caught")])  # fmt: skip
def test_step_lifecycles_the_interpreter_reports(state, lifecycle) -> None:
    doc = build_ops(step("b0/s", state, object_type="VariableAssignment", block_path="b0"))[0].preview()
    assert doc["lifecycle"] == lifecycle
    assert doc["state"] == ("state.statement.Complete" if lifecycle == "caught" else "state.statement.Error")


@pytest.mark.parametrize(
    "record",
    [
        {"kind": "nope"},
        {"kind": "step", "workflow_id": "w", "run_id": "r"},
        {"kind": "step", "workflow_id": "w", "run_id": "r", "path": "p", "state": "weird"},
        {"kind": "runner", "workflow_id": "w"},
        {"kind": "task", "workflow_id": "w", "run_id": "r", "activity_id": "a", "time": "not a time"},
        "not a dict",
    ],
)
def test_bad_records_are_rejected(record) -> None:
    with pytest.raises(RecordError):
        build_ops(record)
