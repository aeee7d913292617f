"""The task listener on a real Temporal worker, and the servers lifecycle, mirrored into secantusdb."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.listeners import TaskEvent
from interpreter.activities.mirror import ids
from interpreter.activities.mirror.listener import MirrorTaskListener
from interpreter.activities.mirror.servers import ServerRegistration


@workflow.defn(name="mirrortest.Call")
class CallTwice:
    """Calls one facet for each path, as the interpreter does for event facet steps."""

    @workflow.run
    async def run(self, spec: dict) -> list:
        results = []
        for path in spec["paths"]:
            results.append(
                await workflow.execute_activity(
                    spec["facet"],
                    {"path": path},
                    activity_id=path,
                    start_to_close_timeout=timedelta(seconds=30),
                    retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=50), maximum_attempts=4),
                )
            )
        return results


async def test_retried_activities_leave_one_task_per_step(temporal_client, task_queue, mongo_uri, mongo_db,
                                                          make_writer) -> None:  # fmt: skip
    attempts: dict[str, int] = {}

    def flaky(payload: dict) -> dict:
        path = payload["path"]
        attempts[path] = attempts.get(path, 0) + 1
        payload["_step_log"](f"{path} attempt {attempts[path]}")
        if attempts[path] < 3:
            raise OSError(f"{path} not yet")
        return {"tries": attempts[path]}

    registry = HandlerRegistry()
    registry.register("mt.Flaky", flaky)
    writer = make_writer(mongo_uri, mongo_db.name)
    registration = ServerRegistration(writer, queues=[task_queue], handlers=registry.names(), ping_interval=60)
    listener = MirrorTaskListener(writer, registration)
    workflow_id = f"mirror-{uuid.uuid4().hex[:8]}"
    async with Worker(temporal_client, task_queue=task_queue, workflows=[CallTwice],
                      activities=[build_handler_activity(registry, task_queue, [listener])],
                      workflow_runner=UnsandboxedWorkflowRunner()):  # fmt: skip
        handle = await temporal_client.start_workflow(
            "mirrortest.Call", {"facet": "mt.Flaky", "paths": ["b0/s0", "b0/s1"]}, id=workflow_id,
            task_queue=task_queue,
        )  # fmt: skip
        assert await handle.result() == [{"tries": 3}, {"tries": 3}]
        run_id = handle.result_run_id
    assert writer.flush(20)
    tasks = list(mongo_db.tasks.find({}, sort=[("activity_id", 1)]))
    assert [t["activity_id"] for t in tasks] == ["b0/s0", "b0/s1"]
    for task in tasks:
        assert task["uuid"] == ids.task_uuid(workflow_id, run_id, task["activity_id"])
        assert task["step_id"] == ids.step_uuid(workflow_id, run_id, task["activity_id"])
        assert task["runner_id"] == ids.runner_uuid(workflow_id, run_id)
        assert (task["state"], task["retry_count"], task["attempt"]) == ("completed", 2, 3)
        assert task["task_list_name"] == task_queue and task["name"] == "mt.Flaky"
        assert task["returns"] == {"tries": 3} and task["data"] == {"path": task["activity_id"]}
        assert task["error"] is None and task["created"] <= task["updated"]
        assert task["server_id"] == registration.uuid and task["task_heartbeat"] >= task["created"]
    logs = list(mongo_db.logs.find({"note_originator": "agent", "details.change": {"$ne": "state"}}))
    assert sorted(log["message"] for log in logs) == sorted(
        f"b0/s{i} attempt {a}" for i in range(2) for a in range(1, 4)
    )
    assert {log["object_id"] for log in logs} == {t["uuid"] for t in tasks}
    assert registration._counts == {"mt.Flaky": [2, 4]}
    # each attempt's events are numbered in the handler's process: claim, line, failure or completion
    for path in ("b0/s0", "b0/s1"):
        entries = list(mongo_db.step_logs.find({"path": path}))
        assert sorted((e["_mirror"]["sub"], e["message"].split(":")[0]) for e in entries) == [
            (attempt * 4096 + index, text) for attempt in (1, 2, 3)
            for index, text in enumerate(["Task claimed", f"{path} attempt {attempt}",
                                          "Handler completed" if attempt == 3 else "Handler failed"])]  # fmt: skip
        assert {e["source"] for e in entries} == {"framework", "handler"}


def test_listener_never_raises_on_a_broken_sink() -> None:
    class Broken:
        def write(self, records):
            raise RuntimeError("down")

    event = TaskEvent(workflow_id="w", run_id="r", activity_id="a", facet="f.F", queue="f", attempt=1,
                      state="running", payload={})  # fmt: skip
    MirrorTaskListener(Broken()).on_task(event)  # must not raise


def test_server_lifecycle_startup_running_ping_shutdown(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    registration = ServerRegistration(writer, queues=["osm", "ffl"], handlers=["osm.Download"],
                                      service="handlers", ping_interval=0.2)  # fmt: skip
    registration.start()
    assert writer.flush(10)
    doc = mongo_db.servers.find_one({"uuid": registration.uuid})
    assert doc["state"] == "running"
    assert doc["topics"] == ["ffl", "osm"] and doc["handlers"] == ["osm.Download"]
    assert doc["service_name"] == "handlers" and doc["server_group"] == "ffl" and doc["server_name"]
    first_ping = doc["ping_time"]
    assert doc["start_time"] <= first_ping
    registration.count("osm.Download", True)
    time.sleep(0.6)
    assert writer.flush(10)
    doc = mongo_db.servers.find_one({"uuid": registration.uuid})
    assert doc["ping_time"] > first_ping
    assert doc["handled"] == [{"handler": "osm.Download", "handled": 1, "not_handled": 0}]
    registration.stop()
    registration.ping()  # a late ping must not revive a stopped server
    assert writer.flush(10)
    doc = mongo_db.servers.find_one({"uuid": registration.uuid})
    assert doc["state"] == "shutdown"
    assert mongo_db.servers.count_documents({}) == 1


def test_mirror_session_registers_the_worker_and_flushes_on_close(mongo_uri, mongo_db, tmp_path) -> None:
    from interpreter.activities.mirror import MirrorSession

    session = MirrorSession(mongo_uri, mongo_db.name, queues=["ffl"], handlers=["a.B"], service="interpreter",
                            spool_dir=tmp_path / "spool").start()  # fmt: skip
    event = TaskEvent(workflow_id="w", run_id="r", activity_id="b0/s", facet="a.B", queue="ffl", attempt=1,
                      state="completed", payload={"x": 1}, returns={"y": 2})  # fmt: skip
    session.listener.on_task(event)
    assert session.close(10)
    server = mongo_db.servers.find_one()
    assert server["state"] == "shutdown" and server["service_name"] == "interpreter"
    assert server["handled"] == [{"handler": "a.B", "handled": 1, "not_handled": 0}]
    assert mongo_db.tasks.find_one()["state"] == "completed"
    assert not list((tmp_path / "spool").glob("*.jsonl"))


class _Counts:
    """A ServerRegistration's counting side alone."""

    uuid = "server-1"

    def __init__(self) -> None:
        self.counted: list[tuple[str, bool]] = []

    def count(self, handler: str, ok: bool) -> None:
        self.counted.append((handler, ok))


def test_a_cancelled_task_counts_neither_as_handled_nor_as_not_handled() -> None:
    """A server whose only task was cancelled must not show a failed handler (the original dashboard's fleet
    page also divides by the largest handled count)."""
    registration = _Counts()
    listener = MirrorTaskListener(type("Sink", (), {"write": lambda self, records: None})(), registration)
    for state in ("running", "canceled", "running", "failed", "running", "completed"):
        listener.on_task(TaskEvent(workflow_id="w", run_id="r", activity_id="a", facet="f.F", queue="f",
                                   attempt=1, state=state, payload={}))  # fmt: skip
    assert registration.counted == [("f.F", False), ("f.F", True)]
