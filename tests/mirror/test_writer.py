"""MirrorWriter against a real secantusdb: idempotent, monotonic, spooled through outages."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pymongo
import pytest

from interpreter.activities.mirror import ids
from interpreter.local import restart, start_mongo

T0 = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def at(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).isoformat()


def run_records(wf: str = "wf-1", run: str = "run-1", n_steps: int = 3) -> list[dict]:
    records = [{"kind": "runner", "workflow_id": wf, "run_id": run, "workflow": "calc.Main", "state": "running",
                "params": {"n": n_steps}, "program_hash": "h1", "time": at(0)}]  # fmt: skip
    for i in range(n_steps):
        base = {"kind": "step", "workflow_id": wf, "run_id": run, "path": f"b0/s{i}", "statement_id": f"calc/s{i}",
                "facet": "calc.Inc", "object_type": "VariableAssignment", "parent_path": None,
                "block_path": "b0", "root_path": "b0"}  # fmt: skip
        records.append({**base, "state": "running", "params": {"i": i}, "time": at(i + 1)})
        records.append({**base, "state": "completed", "returns": {"o": i + 1}, "time": at(i + 1.5)})
    records.append({"kind": "log", "workflow_id": wf, "run_id": run, "path": "b0/s0", "message": "hello",
                    "time": at(1.2)})  # fmt: skip
    records.append({"kind": "runner", "workflow_id": wf, "run_id": run, "workflow": "calc.Main",
                    "state": "completed", "returns": {"total": 6}, "program_hash": "h1", "time": at(10)})  # fmt: skip
    return records


STATE_LOG = {"details.change": "state"}
MESSAGE_LOG = {"details.change": {"$ne": "state"}}


def counts(db) -> dict[str, int]:
    """Documents per collection; ``logs`` counts message entries, ``state_logs`` the state-change entries."""
    found = {name: db[name].count_documents({}) for name in ("runners", "steps", "tasks")}
    found["logs"] = db.logs.count_documents(MESSAGE_LOG)
    found["state_logs"] = db.logs.count_documents(STATE_LOG)
    return found


def test_records_become_documents_once_even_when_written_twice(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    writer.write(run_records())
    assert writer.flush(20)
    first = counts(mongo_db)
    assert first == {"runners": 1, "steps": 1 + 3, "logs": 1, "tasks": 0, "state_logs": 2 + 3 * 2}
    # the root's 2 lifecycles (running, completed), each step's 2, the log line
    assert mongo_db.step_logs.count_documents({}) == 2 + 3 * 2 + 1
    writer.write(run_records())
    writer.write(run_records())
    assert writer.flush(20)
    assert counts(mongo_db) == first and mongo_db.step_logs.count_documents({}) == 2 + 3 * 2 + 1
    runner = mongo_db.runners.find_one({"uuid": ids.runner_uuid("wf-1", "run-1")})
    assert runner["state"] == "completed"
    assert runner["returns"] == {"total": 6}
    assert runner["parameters"] == [{"name": "n", "value": 3}]
    assert runner["start_time"] == ids.to_ms(at(0)) and runner["end_time"] == ids.to_ms(at(10))
    assert runner["duration"] == 10_000
    step = mongo_db.steps.find_one({"path": "b0/s2"})
    assert step["lifecycle"] == "completed" and step["facets"]["returns"] == {"o": 3}
    assert step["state"] == "state.statement.Complete"
    assert step["facets"]["params"] == {"i": 2}
    assert step["timestamp"]["started"] == ids.to_ms(at(3))


def test_a_late_running_record_never_reopens_a_finished_document(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    records = run_records(n_steps=1)
    writer.write(list(reversed(records)))
    assert writer.flush(20)
    assert mongo_db.runners.find_one()["state"] == "completed"
    step = mongo_db.steps.find_one({"path": "b0/s0"})
    assert step["lifecycle"] == "completed"
    assert step["facets"] == {"name": "calc.Inc", "params": {"i": 0}, "returns": {"o": 1}}
    assert mongo_db.steps.find_one({"path": ""})["lifecycle"] == "completed"
    runner = mongo_db.runners.find_one()
    assert runner["start_time"] == ids.to_ms(at(0))
    assert runner["parameters"] == [{"name": "n", "value": 1}]


def test_task_retries_leave_one_task_with_final_state_and_retry_count(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    base = {"kind": "task", "workflow_id": "wf", "run_id": "r", "activity_id": "b0/s1", "facet": "ns.Flaky",
            "queue": "ns", "payload": {"x": 1}}  # fmt: skip
    attempts = [
        {**base, "attempt": 1, "state": "running", "time": at(1)},
        {**base, "attempt": 1, "state": "failed", "error": "flaky", "error_type": "IOError", "time": at(2)},
        {**base, "attempt": 2, "state": "running", "time": at(3)},
        {**base, "attempt": 2, "state": "failed", "error": "flaky", "time": at(4)},
        {**base, "attempt": 3, "state": "running", "time": at(5)},
        {**base, "attempt": 3, "state": "completed", "returns": {"y": 2}, "time": at(6)},
    ]
    for record in attempts:
        writer.write([record])
    writer.write([attempts[1], attempts[2]])  # a late duplicate of an earlier attempt
    assert writer.flush(20)
    (task,) = list(mongo_db.tasks.find())
    assert task["state"] == "completed" and task["retry_count"] == 2 and task["attempt"] == 3
    assert task["error"] is None and task["data"] == {"x": 1} and task["returns"] == {"y": 2}
    assert task["created"] == ids.to_ms(at(1)) and task["updated"] == ids.to_ms(at(6))
    assert mongo_db.tasks.count_documents({"state": "running"}) == 0


def test_spool_is_emptied_once_everything_is_written(mongo_uri, mongo_db, make_writer, tmp_path) -> None:
    writer = make_writer(mongo_uri, mongo_db.name, spool_dir=tmp_path / "s")
    writer.write(run_records())
    assert writer.flush(20)
    (spool,) = list((tmp_path / "s").glob("*.jsonl"))
    assert spool.stat().st_size == 0
    writer.close()
    assert not list((tmp_path / "s").glob("*.jsonl"))


def test_records_spooled_by_a_dead_writer_are_delivered_by_the_next_to_the_same_server(mongo_uri, mongo_db,
                                                                                       make_writer, tmp_path):
    spool_dir = tmp_path / "s"
    service = start_mongo(log_dir=str(tmp_path))
    try:
        uri = service.extra["uri"]
        service.stop()
        stuck = make_writer(uri, mongo_db.name, spool_dir=spool_dir, server_selection_timeout_ms=200)
        stuck.write(run_records(wf="orphan"))
        assert not stuck.close(timeout=0.5)
        assert list(spool_dir.glob("*.jsonl"))
        # a writer to another server leaves the orphan alone: its records are not that server's
        other = make_writer(mongo_uri, mongo_db.name, spool_dir=spool_dir)
        assert other.flush(20) and counts(mongo_db)["steps"] == 0
        service = restart(service)
        heir = make_writer(uri, mongo_db.name, spool_dir=spool_dir)
        assert heir.flush(20)
        db = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)[mongo_db.name]
        assert db.steps.count_documents({"temporal_workflow_id": "orphan"}) == 1 + 3
        assert db.runners.find_one({"temporal_workflow_id": "orphan"})["state"] == "completed"
    finally:
        service.stop()


def test_overflowing_memory_still_delivers_everything(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name, max_memory_records=5, batch_size=4)
    for i in range(6):
        writer.write(run_records(wf=f"wf-{i}", n_steps=2))
    assert writer.flush(30)
    assert counts(mongo_db) == {"runners": 6, "steps": 6 * 3, "logs": 6, "tasks": 0, "state_logs": 6 * (2 + 2 * 2)}


@pytest.mark.slow  # a real server in a process of its own
def test_outage_delays_the_mirror_but_never_blocks_or_loses(tmp_path, make_writer) -> None:
    service = start_mongo(log_dir=str(tmp_path))
    try:
        uri = service.extra["uri"]
        writer = make_writer(uri, "outage", server_selection_timeout_ms=300, max_backoff=0.5)
        writer.write(run_records(wf="before"))
        assert writer.flush(20)
        service.stop()
        slowest = 0.0
        for i in range(20):
            started = time.perf_counter()
            writer.write(run_records(wf=f"during-{i}", n_steps=2))
            slowest = max(slowest, time.perf_counter() - started)
        assert slowest < 0.05
        assert not writer.flush(1.0)
        assert writer.last_error
        service = restart(service)
        assert writer.flush(60)
        db = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)["outage"]
        assert db.runners.count_documents({}) == 21
        assert db.steps.count_documents({}) == 21 + 3 + 20 * 2
        for i in range(20):
            assert db.runners.count_documents({"temporal_workflow_id": f"during-{i}", "state": "completed"}) == 1
            assert db.steps.count_documents({"temporal_workflow_id": f"during-{i}"}) == 1 + 2
        assert db.logs.count_documents(MESSAGE_LOG) == 21
        assert db.logs.count_documents(STATE_LOG) == 21 * 2 + (3 + 20 * 2) * 2
    finally:
        service.stop()


def test_a_record_without_optional_fields_keeps_what_earlier_records_said(mongo_uri, mongo_db, make_writer):
    writer = make_writer(mongo_uri, mongo_db.name)
    base = {"kind": "step", "workflow_id": "w", "run_id": "r", "path": "b0/s"}
    writer.write([
        {**base, "state": "running", "object_type": "SchemaInstantiation", "statement_id": "a.W/b0/s",
         "facet": "a.Rec", "time": at(1)},
        {**base, "state": "failed", "object_type": "", "statement_id": "", "facet": "", "error": "bad",
         "time": at(2)},
    ])  # fmt: skip
    assert writer.flush(20)
    step = mongo_db.steps.find_one()
    assert (step["object_type"], step["statement_id"], step["facets"]["name"], step["facet_name"]) == (
        "SchemaInstantiation", "a.W/b0/s", "a.Rec", "a.Rec")
    assert step["lifecycle"] == "failed" and step["error"] == {"message": "bad"}
    assert step["state"] == "state.statement.Error"


def _task_records(wf: str = "wf-o") -> tuple[list[dict], list[dict]]:
    """A task's scheduling (workflow, record seq 5) and its handler's attempt (running, two lines, completed)."""
    task = {"workflow_id": wf, "run_id": "r", "activity_id": "b0/s", "facet": "ns.Ev", "queue": "ns"}
    workflow = [{"kind": "task", **task, "attempt": 1, "state": "pending", "seq": 5, "time": at(1)}]
    handler = [{"kind": "task", **task, "attempt": 1, "state": "running", "index": 0, "server_id": "srv", "time": at(2)},
               {"kind": "task_log", **task, "attempt": 1, "index": 1, "message": "one", "time": at(2)},
               {"kind": "task_log", **task, "attempt": 1, "index": 2, "message": "two", "time": at(2)},
               {"kind": "task", **task, "attempt": 1, "state": "completed", "index": 3, "returns": {}, "time": at(3)}]
    return workflow, handler


def _orders(db, collection: str) -> list[tuple[int, str]]:
    return sorted((e["order"], e.get("message", "")) for e in db[collection].find({}))


def test_handler_entries_sort_after_their_tasks_scheduling_whichever_arrives_first(mongo_uri, mongo_db,
                                                                                    make_writer) -> None:
    from interpreter.activities.mirror.entries import ORDER_SLOT, agent_sub

    workflow, handler = _task_records()
    interpreter_side, handler_side = make_writer(mongo_uri, mongo_db.name), make_writer(mongo_uri, mongo_db.name)
    handler_side.write(handler)  # the handler's process reaches MongoDB first
    assert handler_side.flush(20)
    assert all(e["order"] is None for e in mongo_db.logs.find({}))
    interpreter_side.write(workflow)
    assert interpreter_side.flush(20)
    logs = _orders(mongo_db, "logs")
    anchor = 5 * ORDER_SLOT
    assert [order for order, _ in logs] == [anchor] + [anchor + agent_sub(1, i) for i in range(4)]
    assert [message.split(" for ")[0] for _, message in logs] == ["task ns.Ev", "task ns.Ev", "one", "two",
                                                                  "task ns.Ev"]  # fmt: skip
    step_logs = _orders(mongo_db, "step_logs")
    assert [m.split(":")[0] for _, m in step_logs] == ["Step waits for its handler (task ns.Ev on queue ns) (state.EventTransmit)",
                                                        "Task claimed", "one", "two", "Handler completed"]  # fmt: skip
    # the other way round gives the same orders
    mongo_db.client.drop_database(mongo_db.name)
    interpreter_side.write(workflow)
    assert interpreter_side.flush(20)
    handler_side.write(handler)
    assert handler_side.flush(20)
    assert _orders(mongo_db, "logs") == logs and _orders(mongo_db, "step_logs") == step_logs


def test_a_cancelled_runs_end_closes_its_open_steps_and_tasks(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    records = run_records(n_steps=2)[:-1]  # running, two steps completed, no end yet
    waiting = {"kind": "step", "workflow_id": "wf-1", "run_id": "run-1", "path": "b0/w", "facet": "calc.Wait",
               "object_type": "VariableAssignment", "parent_path": None, "block_path": "b0", "state": "running",
               "time": at(5)}  # fmt: skip
    task = {"kind": "task", "workflow_id": "wf-1", "run_id": "run-1", "activity_id": "b0/w", "facet": "calc.Wait",
            "queue": "calc", "state": "pending", "time": at(5)}
    end = {"kind": "runner", "workflow_id": "wf-1", "run_id": "run-1", "workflow": "calc.Main", "state": "cancelled",
           "error": "cancelled", "program_hash": "h1", "time": at(6)}  # fmt: skip
    writer.write([*records, waiting, task, end])
    assert writer.flush(20)
    states = {s["path"]: (s["lifecycle"], s["state"]) for s in mongo_db.steps.find({})}
    assert states == {"": ("cancelled", "state.statement.Error"), "b0/s0": ("completed", "state.statement.Complete"),
                      "b0/s1": ("completed", "state.statement.Complete"), "b0/w": ("cancelled", "state.statement.Error")}
    assert mongo_db.tasks.find_one()["state"] == "canceled"
    assert mongo_db.runners.find_one()["state"] == "cancelled"


def test_a_document_a_dashboard_replaced_takes_the_next_record(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    records = run_records(n_steps=1)
    writer.write(records[:2])  # the runner is running, b0/s0 too
    assert writer.flush(20)
    uuid = ids.step_uuid("wf-1", "run-1", "b0/s0")
    mongo_db.steps.replace_one({"_id": uuid}, {"uuid": uuid, "workflow_id": "x", "object_type": "VariableAssignment",
                                               "state": "state.EventTransmit"})  # what a Retry button writes
    writer.write(records[2:])
    assert writer.flush(20)
    step = mongo_db.steps.find_one({"_id": uuid})
    assert (step["state"], step["lifecycle"], step["path"]) == ("state.statement.Complete", "completed", "b0/s0")
