"""The payload extras of the original runtime, with its signatures: unit rules, then on the dev server
(and into the Mongo mirror)."""

from __future__ import annotations

import logging
import uuid

import pymongo
import pytest
from temporalio.client import WorkflowFailureError
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.listeners import CollectingListener
from interpreter.activities.mirror import MirrorTaskListener, MirrorWriter, ids
from interpreter.activities.payload import level_name, parse_heartbeat, task_uuid

from .call_handler import CallHandler

# ----------------------------------------------------------------------------- rules

@pytest.mark.parametrize("args, kwargs, pct, message, details", [
    ((), {}, None, None, None),
    ((50,), {}, 50, None, {"progress_pct": 50, "progress_message": None}),
    ((12.7, "copying"), {}, 12, "copying", {"progress_pct": 12, "progress_message": "copying"}),
    ((), {"progress_pct": 150}, 100, None, {"progress_pct": 100, "progress_message": None}),
    ((), {"progress_message": "step 2"}, None, "step 2", {"progress_pct": None, "progress_message": "step 2"}),
    (({"done": 3},), {}, None, None, {"done": 3}),  # the single-details form this project had before
    (("phase two",), {}, None, None, "phase two"),
    ((), {"details": [1], "progress_pct": 5}, 5, None, {"progress_pct": 5, "progress_message": None, "details": [1]}),
])  # fmt: skip
def test_heartbeat_takes_progress_or_plain_details(args, kwargs, pct, message, details):
    progress = parse_heartbeat(args, kwargs)
    assert (progress.pct, progress.message, progress.details) == (pct, message, details)


def test_heartbeat_refuses_what_it_cannot_read():
    with pytest.raises(TypeError, match="at most two arguments"):
        parse_heartbeat((1, "a", "b"), {})
    with pytest.raises(TypeError, match="percent"):
        parse_heartbeat((), {"percent": 3})
    with pytest.raises(TypeError, match="progress_pct must be a number"):
        parse_heartbeat(("half", "way"), {})


class Level:
    value = "SUCCESS"  # an enum-like constant, as the original's StepLogLevel members may be


@pytest.mark.parametrize("level, name", [("info", "info"), ("success", "success"), ("WARNING", "warning"),
                                         ("warn", "warning"), (logging.ERROR, "error"), (Level(), "success")])
def test_step_log_levels_read_as_the_original_names_them(level, name):
    assert level_name(level) == name


def test_task_uuid_is_stable_per_workflow_and_step():
    assert task_uuid("wf-1", "b0/s1") == task_uuid("wf-1", "b0/s1")
    assert len({task_uuid("wf-1", "b0/s1"), task_uuid("wf-1", "b0/s2"), task_uuid("wf-2", "b0/s1")}) == 3
    assert str(uuid.UUID(task_uuid("wf-1", "b0/s1"))) == task_uuid("wf-1", "b0/s1")


# ----------------------------------------------------------------------------- on the dev server

async def _call(client, queue, registry, facet, payload, listeners=(), **spec):
    async with Worker(client, task_queue=queue, workflows=[CallHandler],
                      activities=[build_handler_activity(registry, queue, listeners)],
                      workflow_runner=UnsandboxedWorkflowRunner()):  # fmt: skip
        workflow_id = f"test-{uuid.uuid4().hex[:8]}"
        result = await client.execute_workflow("test.CallHandler", {"facet": facet, "payload": payload, **spec},
                                               id=workflow_id, task_queue=queue)  # fmt: skip
        return workflow_id, result


async def test_extras_reach_a_registry_style_handler_on_every_attempt(temporal_client, task_queue, tmp_path):
    module = tmp_path / "billing_impl.py"
    module.write_text(
        "seen = []\n"
        "def handle(payload):\n"
        "    seen.append({k: payload[k] for k in ('_facet_name', '_task_uuid', '_handler_metadata', '_retry_count')})\n"
        "    payload['_step_log']('positional level', 'success')\n"
        "    payload['_step_log']('keyword level', level='error', details={'n': payload['n']})\n"
        "    payload['_step_log'].append({'message': 'as a list', 'level': 'warning'})\n"
        "    payload['_task_heartbeat'](30, 'a third')\n"
        "    payload['_task_heartbeat'](progress_pct=60)\n"
        "    if len(seen) == 1:\n"
        "        raise OSError('try again')\n"
        "    return {'keys': sorted(payload), 'n': payload['n']}\n")  # fmt: skip
    registry = HandlerRegistry()
    registry.register_handler(facet_name="t.Bill", module_uri=f"file://{module}", entrypoint="handle",
                              metadata={"tier": "gold"})  # fmt: skip
    listener = CollectingListener()
    workflow_id, result = await _call(temporal_client, task_queue, registry, "t.Bill", {"n": 7}, [listener],
                                      path="b0/s3")  # fmt: skip
    assert result == {"keys": ["n"], "n": 7}  # the extras are reachable but never iterated
    seen = registry.registration("t.Bill").fn.__globals__["seen"]
    expected = {"_facet_name": "t.Bill", "_task_uuid": task_uuid(workflow_id, "b0/s3"),
                "_handler_metadata": {"tier": "gold"}}  # fmt: skip
    assert seen == [{**expected, "_retry_count": 0}, {**expected, "_retry_count": 1}]
    assert [(e.message, e.level, e.details) for e in listener.logs[:3]] == [
        ("positional level", "success", None), ("keyword level", "error", {"n": 7}), ("as a list", "warning", None)]
    assert [(e.progress_pct, e.progress_message, e.attempt) for e in listener.progress] == [
        (30, "a third", 1), (60, None, 1), (30, "a third", 2), (60, None, 2)]


async def test_progress_and_log_details_reach_the_mirror(temporal_client, task_queue, mongo_service, tmp_path):
    uri = mongo_service.extra["uri"]
    database = "ffl_test_" + uuid.uuid4().hex[:12]
    writer = MirrorWriter(uri, database, spool_dir=tmp_path / "spool")

    def copy(payload):
        payload["_task_heartbeat"](progress_pct=75, progress_message="copying tiles")
        payload["_step_log"]("copied", level="success", details={"tiles": 12})
        return {"ok": True}

    registry = HandlerRegistry()
    registry.register("t.Copy", copy)
    client = pymongo.MongoClient(uri, serverSelectionTimeoutMS=5000)
    try:
        workflow_id, _ = await _call(temporal_client, task_queue, registry, "t.Copy", {}, [MirrorTaskListener(writer)],
                                     path="b0/s0")  # fmt: skip
        assert writer.flush(20)
        db = client[database]
        description = await temporal_client.get_workflow_handle(workflow_id).describe()
        task = db.tasks.find_one({"uuid": ids.task_uuid(workflow_id, description.run_id, "b0/s0")})
        assert task["state"] == "completed"  # a progress record never outranks the task's end
        assert (task["progress_pct"], task["progress_message"]) == (75, "copying tiles")
        assert task["task_heartbeat"] > 0
        log = db.logs.find_one({"message": "copied"})
        assert log["details"]["tiles"] == 12 and log["details"]["path"] == "b0/s0"
    finally:
        writer.close(timeout=2)
        client.drop_database(database)
        client.close()


async def test_a_registered_timeout_fails_a_hanging_attempt_as_handler_timeout(temporal_client, task_queue, tmp_path):
    module = tmp_path / "hang_impl.py"
    module.write_text("import time\ndef hang(payload):\n    time.sleep(3)\n    return {}\n")
    registry = HandlerRegistry()
    registry.register_handler(facet_name="t.Hang", module_uri=f"file://{module}", entrypoint="hang", timeout_ms=300)
    with pytest.raises(WorkflowFailureError) as info:
        await _call(temporal_client, task_queue, registry, "t.Hang", {}, attempts=1)
    cause = info.value.cause.cause
    assert cause.type == "HandlerTimeout" and "registered timeout of 300 ms" in cause.message
