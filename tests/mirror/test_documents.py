"""Record → document builders give the original schema's field names and types, with deterministic ids."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interpreter.activities.mirror import RecordError, build_ops, ids

T0 = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
T0_MS = 1714564800250


def _doc(record: dict) -> dict:
    op = build_ops(record)[0]
    return op.preview()


def test_to_ms_accepts_datetimes_iso_strings_and_numbers() -> None:
    assert ids.to_ms(T0) == T0_MS
    assert ids.to_ms(T0.replace(tzinfo=None)) == T0_MS
    assert ids.to_ms("2024-05-01T12:00:00.250Z") == T0_MS
    assert ids.to_ms("2024-05-01T14:00:00.250+02:00") == T0_MS
    assert ids.to_ms(T0_MS) == T0_MS
    assert ids.to_ms(None) is None


def test_runner_document_has_the_seed_fields() -> None:
    record = {"kind": "runner", "workflow_id": "wf-1", "run_id": "run-1", "workflow": "calc.Add",
              "state": "running", "params": {"a": 1, "b": 2}, "returns": None, "error": None,
              "program_hash": "abc123", "time": T0}  # fmt: skip
    doc = _doc(record)
    assert doc["uuid"] == doc["_id"] == ids.runner_uuid("wf-1", "run-1")
    assert doc["workflow_id"] == "wf-1" and doc["run_id"] == "run-1"
    assert doc["state"] == "running"
    assert doc["parameters"] == [{"name": "a", "value": 1}, {"name": "b", "value": 2}]
    assert doc["start_time"] == T0_MS and isinstance(doc["start_time"], int)
    assert doc["end_time"] == 0 and doc["duration"] == 0 and doc["retain"] == 0
    assert doc["step_id"] is None and doc["user"] is None
    assert doc["compiled_ast"] is None and doc["workflow_ast"] is None
    assert doc["flow_id"] == ids.flow_uuid("abc123")
    workflow = doc["workflow"]
    assert set(workflow) >= {"uuid", "name", "namespace_id", "facet_id", "flow_id", "starting_step", "version",
                             "metadata", "documentation", "date"}  # fmt: skip
    assert workflow["name"] == "calc.Add" and workflow["namespace_id"] == "calc"
    assert workflow["uuid"] == ids.workflow_uuid("abc123", "calc.Add")
    assert workflow["flow_id"] == doc["flow_id"] and workflow["version"] == "abc123"


def test_finished_runner_sets_end_time_and_error() -> None:
    doc = _doc({"kind": "runner", "workflow_id": "w", "run_id": "r", "workflow": "a.B", "state": "failed",
                "error": "boom", "time": T0})  # fmt: skip
    assert doc["state"] == "failed"
    assert doc["end_time"] == T0_MS
    assert doc["error"] == {"message": "boom"}


def test_step_document_has_the_seed_fields() -> None:
    record = {"kind": "step", "workflow_id": "wf", "run_id": "r", "path": "block0/s1", "statement_id": "calc.Add/b0/s1",
              "facet": "calc.Sum", "object_type": "VariableAssignment", "parent_path": "root",
              "block_path": "block0", "root_path": "root", "state": "completed", "params": {"x": 1},
              "returns": {"y": 2}, "error": None, "time": T0}  # fmt: skip
    doc = _doc(record)
    assert doc["uuid"] == ids.step_uuid("wf", "r", "block0/s1")
    assert doc["object_type"] == "VariableAssignment"
    assert doc["runner_id"] == ids.runner_uuid("wf", "r")
    assert doc["workflow_id"] == "wf"
    assert doc["statement_id"] == "calc.Add/b0/s1"
    assert doc["container_type"] == "Step"
    assert doc["container_id"] == ids.step_uuid("wf", "r", "root")
    assert doc["block_id"] == ids.step_uuid("wf", "r", "block0")
    assert doc["root_id"] == ids.step_uuid("wf", "r", "root")
    assert doc["is_starting_step"] is False
    assert doc["lock_status"] == ""
    assert doc["flow_definition_id"] is None and doc["extra_data"] is None
    assert doc["parameters"] == [{"name": "x", "value": 1}]
    assert doc["facets"] == {"name": "calc.Sum", "params": {"x": 1}, "returns": {"y": 2}}
    assert doc["state"] == "completed"
    assert doc["error"] is None
    assert doc["timestamp"]["created"] == T0_MS and doc["timestamp"]["completed"] == T0_MS
    assert doc["path"] == "block0/s1"


def test_root_step_is_the_starting_step_contained_by_the_runner() -> None:
    doc = _doc({"kind": "step", "workflow_id": "wf", "run_id": "r", "path": "root", "state": "running",
                "object_type": "AndThen", "time": T0})  # fmt: skip
    assert doc["is_starting_step"] is True
    assert doc["container_type"] == "Runner" and doc["container_id"] == ids.runner_uuid("wf", "r")
    assert doc["timestamp"]["started"] == T0_MS


def test_task_document_has_the_seed_fields_and_retry_count() -> None:
    record = {"kind": "task", "workflow_id": "wf", "run_id": "r", "activity_id": "block0/s1", "facet": "ns.Ev",
              "queue": "ns", "attempt": 3, "state": "failed", "payload": {"a": 1}, "returns": None,
              "error": "nope", "error_type": "ValueError", "time": T0_MS}  # fmt: skip
    doc = _doc(record)
    assert doc["uuid"] == ids.task_uuid("wf", "r", "block0/s1")
    assert doc["name"] == "ns.Ev"
    assert doc["runner_id"] == ids.runner_uuid("wf", "r")
    assert doc["workflow_id"] == "wf" and doc["flow_id"] == ""
    assert doc["step_id"] == ids.step_uuid("wf", "r", "block0/s1")
    assert doc["task_list_name"] == "ns"
    assert doc["state"] == "failed"
    assert doc["created"] == T0_MS and doc["updated"] == T0_MS
    assert doc["error"] == {"message": "nope", "type": "ValueError"}
    assert doc["data_type"] == "json" and doc["data"] == {"payload": {"a": 1}}
    assert doc["retry_count"] == 2 and doc["attempt"] == 3


def test_log_documents_have_the_seed_fields() -> None:
    wf_log = _doc({"kind": "log", "workflow_id": "wf", "run_id": "r", "path": "s1", "message": "hi", "time": T0})
    assert wf_log["runner_id"] == ids.runner_uuid("wf", "r")
    assert wf_log["step_id"] == wf_log["object_id"] == ids.step_uuid("wf", "r", "s1")
    assert wf_log["object_type"] == "step"
    assert (wf_log["note_originator"], wf_log["note_type"], wf_log["note_importance"]) == ("workflow", "info", 5)
    assert wf_log["message"] == "hi" and wf_log["time"] == T0_MS and wf_log["order"] == T0_MS
    assert wf_log["line"] == 0 and wf_log["file"] == "" and isinstance(wf_log["details"], dict)
    agent = _doc({"kind": "task_log", "workflow_id": "wf", "run_id": "r", "activity_id": "s1", "facet": "n.E",
                  "message": "bad", "level": "ERROR", "time": T0})  # fmt: skip
    assert agent["note_originator"] == "agent" and agent["note_type"] == "error" and agent["note_importance"] == 1
    assert agent["object_id"] == ids.task_uuid("wf", "r", "s1") and agent["object_type"] == "task"
    assert agent["uuid"] != wf_log["uuid"]


def test_server_document_has_the_seed_fields() -> None:
    doc = _doc({"kind": "server", "uuid": "srv-1", "server_group": "ffl", "service_name": "worker",
                "server_name": "host-a", "server_ips": ["10.0.0.1"], "topics": ["ffl", "osm"],
                "handlers": ["osm.Download"], "state": "startup", "start_time": T0, "time": T0})  # fmt: skip
    assert doc["uuid"] == "srv-1"
    assert (doc["server_group"], doc["service_name"], doc["server_name"]) == ("ffl", "worker", "host-a")
    assert doc["server_ips"] == ["10.0.0.1"] and doc["topics"] == ["ffl", "osm"]
    assert doc["handlers"] == ["osm.Download"] and doc["handled"] == []
    assert doc["start_time"] == T0_MS and doc["ping_time"] == T0_MS
    assert doc["state"] == "startup" and doc["manager"] == "" and doc["error"] is None


def test_ids_are_deterministic_and_distinct() -> None:
    a = build_ops({"kind": "step", "workflow_id": "w", "run_id": "r", "path": "p", "time": T0})[0]
    b = build_ops({"kind": "step", "workflow_id": "w", "run_id": "r", "path": "p", "state": "running"})[0]
    c = build_ops({"kind": "step", "workflow_id": "w", "run_id": "r2", "path": "p", "time": T0})[0]
    assert a.uuid == b.uuid != c.uuid
    assert ids.step_uuid("w", "r", "p") != ids.task_uuid("w", "r", "p")


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
