"""Worker processes SIGKILLed during an activity: after Temporal's retry, one task document, no duplicates.

Everything runs as the command line does: ``ffl publish --mongo`` stores the
program in MongoDB, an interpreter ``worker.py --mongo`` loads it from there
and mirrors the run, handler ``worker.py --mongo`` processes mirror their
tasks. The first handler process is killed while it runs the step, and the
interpreter process with it; once the attempt's start-to-close timeout
expires a second handler process runs attempt 2 and a second interpreter
process replays the run to its end. The mirror then holds one task document
for the step — completed, retry count 1 — one runner and one document per
step, and ``ffl status --mongo`` shows it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from pathlib import Path

from interpreter.activities.mirror import ids
from interpreter.cli import run as ffl
from tests.mirror.schema_checks import check_documents, check_references
from tests.runtime.test_worker import WorkerProcess

PROGRAM = """
namespace k {
    event facet Slow(n: Long) => (out: Long)
    workflow Main(n: Long) => (out: Long) andThen {
        s = Slow(n = $.n)
        yield Main(out = s.out)
    }
}
"""

HANDLERS = """
import os
import time
from pathlib import Path

from interpreter.activities.handlers import handler

MARKS = Path({marks!r})


@handler("k.Slow")
def slow(payload):
    (MARKS / f"attempt-{{payload['_retry_count'] + 1}}-{{os.getpid()}}").write_text("")
    payload["_step_log"](f"attempt {{payload['_retry_count'] + 1}} in {{os.getpid()}}")
    if payload["_retry_count"] == 0:
        time.sleep(60)  # killed long before this ends
    return {{"out": payload["n"] * 2}}
"""


async def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def test_killed_handler_worker_leaves_one_task_with_the_retry_count(
    temporal_service, temporal_client, mongo_service, mongo_db, tmp_path, capsys
) -> None:
    uri = f"{mongo_service.extra['uri']}/{mongo_db.name}"
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "k.ffl").write_text(PROGRAM)
    (tmp_path / "k_handlers.py").write_text(HANDLERS.format(marks=str(marks)))
    queue = "ffl-" + uuid.uuid4().hex[:8]
    handler_queue = queue + "-k"
    config = {"queues": {"k": handler_queue}, "facet_retry": {"k.Slow": {
        "maximum_attempts": 3, "initial_interval_seconds": 0.2, "start_to_close_seconds": 3}}}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    env = {"TEMPORAL_ADDRESS": temporal_service.address, "FFL_MIRROR_SPOOL": str(tmp_path / "spool"),
           "FFL_REGISTRY": ""}  # fmt: skip
    common = ["--mongo", uri, "--config", str(tmp_path / "config.json")]
    handler_args = ["--task-queue", handler_queue, "--handlers", str(tmp_path / "k_handlers.py"), *common]

    assert ffl(["publish", str(tmp_path / "k.ffl"), "--mongo", uri]) == 0
    assert f"to MongoDB database {mongo_db.name}" in capsys.readouterr().out
    interpreter = WorkerProcess("--task-queue", queue, "--interpreter", *common, env=env)
    first = WorkerProcess(*handler_args, env=env)
    second = interpreter2 = None
    try:
        assert "programs from MongoDB" in interpreter.wait_ready()
        first.wait_ready()
        handle = await temporal_client.start_workflow("k.Main", {"n": 21}, id="kill-" + uuid.uuid4().hex[:8],
                                                      task_queue=queue)  # fmt: skip
        await _wait_for(lambda: (marks / f"attempt-1-{first.proc.pid}").exists(), 30, "attempt 1")
        # attempt 1 is running in the first process: its task document says so
        task_id = ids.task_uuid(handle.id, (await handle.describe()).run_id, "b0/s")
        await _wait_for(lambda: (mongo_db.tasks.find_one({"uuid": task_id}) or {}).get("state") == "running", 10,
                        "the running task document")  # fmt: skip
        # both the handler worker and the interpreter worker die; their replacements finish the run
        for process in (first, interpreter):
            process.proc.send_signal(signal.SIGKILL)
            assert process.proc.wait(10) == -signal.SIGKILL
        # the second handler process finds MongoDB through MONGODB_URI instead of --mongo
        second = WorkerProcess(*[a for a in handler_args if a not in ("--mongo", uri)],
                               env={**env, "MONGODB_URI": uri})  # fmt: skip
        interpreter2 = WorkerProcess("--task-queue", queue, "--interpreter", *common, env=env)
        second.wait_ready()
        interpreter2.wait_ready()
        assert await asyncio.wait_for(handle.result(), 45) == {"out": 42}
        assert (marks / f"attempt-2-{second.proc.pid}").exists()
        assert second.stop() == 0 and interpreter2.stop() == 0
    finally:
        for process in (first, second, interpreter, interpreter2):
            if process is not None and process.proc.poll() is None:
                process.stop(signal.SIGKILL)

    run_id = handle.result_run_id
    check_documents(mongo_db)
    check_references(mongo_db)
    (task,) = list(mongo_db.tasks.find({}))
    assert task["uuid"] == task_id and task["step_id"] == ids.step_uuid(handle.id, run_id, "b0/s")
    assert (task["state"], task["attempt"], task["retry_count"]) == ("completed", 2, 1)
    assert task["data"] == {"n": 21} and task["returns"] == {"out": 42} and task["error"] is None
    assert task["task_list_name"] == handler_queue and task["name"] == "k.Slow"
    changes = [(log["state"], log["details"].get("attempt")) for log in
               mongo_db.logs.find({"object_id": task_id, "details.change": "state"}, sort=[("order", 1)])]  # fmt: skip
    assert sorted(changes) == [("completed", 2), ("pending", 1), ("running", 1), ("running", 2)]
    lines = sorted(log["message"].split(" in ")[0] for log in
                   mongo_db.logs.find({"object_id": task_id, "details.change": {"$ne": "state"}}))  # fmt: skip
    assert lines == ["attempt 1", "attempt 2"]
    assert mongo_db.runners.count_documents({}) == 1
    assert sorted(d["path"] for d in mongo_db.steps.find({})) == ["", "b0", "b0/s", "b0/yield Main"]
    runner = mongo_db.runners.find_one({})
    assert runner["uuid"] == ids.runner_uuid(handle.id, run_id)
    assert runner["state"] == "completed" and runner["returns"] == {"out": 42} and runner["compiled_ast"]
    step = mongo_db.steps.find_one({"path": "b0/s"})
    assert step["lifecycle"] == "completed" and step["facets"]["returns"] == {"out": 42}
    # attempt 2's server is the second handler process's
    assert task["server_id"] in {s["uuid"] for s in mongo_db.servers.find({"topics": [handler_queue]})}

    # servers: the killed process stays "running" (its ping goes stale); the others shut down
    servers = list(mongo_db.servers.find({}))
    assert len(servers) == 4
    interpreter_servers = sorted((s for s in servers if s["topics"] == [queue]), key=lambda s: s["start_time"])
    assert [(s["service_name"], s["state"]) for s in interpreter_servers] == [("interpreter", "running"),
                                                                              ("interpreter", "shutdown")]
    handler_servers = sorted((s for s in servers if s["topics"] == [handler_queue]), key=lambda s: s["start_time"])
    assert [s["state"] for s in handler_servers] == ["running", "shutdown"]
    assert all(s["handlers"] == ["k.Slow"] for s in handler_servers)
    assert handler_servers[1]["handled"] == [{"handler": "k.Slow", "handled": 1, "not_handled": 0}]

    # ffl status reads the run from the mirror
    assert ffl(["status", handle.id, "--mongo", uri]) == 0
    out = capsys.readouterr().out
    assert f"k.Main  workflow {handle.id}  run {run_id}  completed" in out
    assert f"[task completed on {handler_queue}, 1 retries]" in out
    # the killed process's spool was taken over by the second process: nothing is left undelivered
    assert all(p.stat().st_size == 0 for p in Path(tmp_path / "spool").glob("*.jsonl"))
