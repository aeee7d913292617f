"""MongoDB stops in the middle of a real run: the run finishes anyway, and the mirror catches up.

A handler blocks until the test has stopped the MongoDB server; the rest of
the run (the blocked step's completion, a further step, the yield, the
runner's end) happens while MongoDB is down — stopped with SIGTERM, or killed
with SIGKILL. The server then restarts on the same port and storage, and every
runner, step and task document is there, complete and once.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import uuid

import pymongo
import pytest

from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.mirror import MirrorSession, MongoProgramStore, ids
from interpreter.cli.worker_main import build_worker
from interpreter.compiler import compile_sources
from interpreter.local import restart, start_mongo
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.constants import STEPS_QUERY
from tests.mirror.schema_checks import check_documents, check_order, check_references, check_tree

SOURCE = """
namespace o {
    event facet Inc(n: Long) => (out: Long)
    event facet Wait(n: Long) => (out: Long)
    workflow Main(n: Long) => (total: Long) andThen {
        a = Inc(n = $.n)
        b = Wait(n = a.out)
        c = Inc(n = b.out)
        yield Main(total = c.out)
    }
}
"""


def _kill(service) -> None:
    service.process.send_signal(signal.SIGKILL)
    service.process.wait(10)


@pytest.mark.parametrize("stop", ["sigterm", "kill -9"])
async def test_mongo_outage_mid_run_loses_and_duplicates_nothing(temporal_client, tmp_path, stop) -> None:
    # kill -9 loses what a server acknowledged but had not yet put on disk: killed, it must sync on commit
    service = start_mongo(log_dir=str(tmp_path), sync_on_commit=stop == "kill -9")
    sessions: list[MirrorSession] = []
    try:
        uri = service.extra["uri"]
        store = MongoProgramStore(uri, "outage")
        store.publish(compile_sources([("o.ffl", SOURCE)]))
        queue = "ffl-" + uuid.uuid4().hex[:8]
        handler_queue = queue + "-o"
        config = RuntimeConfig(mirror=True, queues={"o": handler_queue},
                               retry=RetryConfig(maximum_attempts=1, start_to_close_seconds=30))  # fmt: skip
        entered, release = threading.Event(), threading.Event()

        def wait(payload: dict) -> dict:
            entered.set()
            assert release.wait(30)
            payload["_step_log"]("released while MongoDB was down")
            return {"out": payload["n"] * 10}

        registry = HandlerRegistry()
        registry.register("o.Inc", lambda p: {"out": p["n"] + 1})
        registry.register("o.Wait", wait)
        interpreter_side = MirrorSession(uri, "outage", program_store=store, queues=[queue], service="interpreter",
                                         spool_dir=tmp_path / "spool", ping_interval=0.5).start()  # fmt: skip
        handler_side = MirrorSession(uri, "outage", queues=[handler_queue], handlers=registry.names(),
                                     service="handlers", spool_dir=tmp_path / "spool", ping_interval=0.5).start()
        sessions += [interpreter_side, handler_side]
        workers = [
            build_worker(temporal_client, queue, HandlerRegistry(), store=store, config=config, interpreter=True,
                         mirror=interpreter_side.writer),
            build_worker(temporal_client, handler_queue, registry, config=config, listeners=[handler_side.listener]),
        ]  # fmt: skip
        async with workers[0], workers[1]:
            handle = await temporal_client.start_workflow("o.Main", {"n": 1}, id="outage-" + uuid.uuid4().hex[:8],
                                                          task_queue=queue)  # fmt: skip
            assert await asyncio.to_thread(entered.wait, 30)
            assert await asyncio.to_thread(interpreter_side.writer.flush, 10)
            await asyncio.to_thread(service.stop if stop == "sigterm" else lambda: _kill(service))
            release.set()
            assert await asyncio.wait_for(handle.result(), 20) == {"total": 21}
            steps = await handle.query(STEPS_QUERY)
        # The run did not wait for MongoDB: it ended while what happened during the outage is still queued.
        assert interpreter_side.writer.pending > 0 and handler_side.writer.pending > 0
        assert not interpreter_side.writer.flush(1.5) and interpreter_side.writer.last_error

        service = restart(service)
        assert await asyncio.to_thread(interpreter_side.writer.flush, 60)
        assert await asyncio.to_thread(handler_side.writer.flush, 60)
        db = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)["outage"]
        check_documents(db)
        check_references(db)
        check_tree(db)
        check_order(db)
        runner = db.runners.find_one({"uuid": ids.runner_uuid(handle.id, handle.result_run_id)})
        assert runner["state"] == "completed" and runner["returns"] == {"total": 21}
        assert runner["compiled_ast"] is not None and runner["duration"] == runner["end_time"] - runner["start_time"]
        assert db.runners.count_documents({}) == 1
        docs = {s["path"]: s for s in db.steps.find({"runner_id": runner["uuid"]})}
        assert db.steps.count_documents({}) == len(docs) == 6  # the root, a, b, c, the block b0, the yield
        for step in steps:  # every step the workflow knows, as the workflow knows it
            doc = docs[step["path"]]
            assert doc["lifecycle"] == step["state"] == "completed" and doc["state"] == "state.statement.Complete"
            assert doc["facets"]["returns"] == step["returns"]
        assert docs["b0/c"]["facets"] == {"name": "o.Inc", "params": {"n": 20}, "returns": {"out": 21}}
        tasks = list(db.tasks.find({}))
        assert sorted(t["name"] for t in tasks) == ["o.Inc", "o.Inc", "o.Wait"]
        assert all((t["state"], t["retry_count"]) == ("completed", 0) for t in tasks)
        assert {t["step_id"] for t in tasks} == {docs[p]["uuid"] for p in ("b0/a", "b0/b", "b0/c")}
        (line,) = db.logs.find({"message": "released while MongoDB was down"})
        assert line["object_id"] == ids.task_uuid(handle.id, handle.result_run_id, "b0/b")
        assert db.logs.count_documents({"object_id": runner["uuid"], "details.change": "state"}) == 3
        assert db.logs.count_documents({"object_type": "task", "details.change": "state"}) == 3 * 3
    finally:
        for session in sessions:
            session.close(timeout=2)
        service.stop()
