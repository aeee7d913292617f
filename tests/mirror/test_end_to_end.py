"""A real FFL run on the dev server, programs from MongoProgramStore, mirrored by MirrorWriter."""

from __future__ import annotations

import io
import uuid

from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.mirror import MirrorTaskListener, MongoProgramStore, ids
from interpreter.activities.mirror.status import load_run, render_run
from interpreter.cli.mirror_cmds import status_from_mongo
from interpreter.compiler import compile_sources
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.workflows import FFLWorkflow

SOURCE = """
namespace m {
    event facet Inc(n: Long) => (out: Long)
    workflow Main(n: Long) => (total: Long) andThen {
        a = Inc(n = $.n)
        b = Inc(n = a.out)
        yield Main(total = b.out)
    }
}
"""


async def test_a_run_is_mirrored_with_steps_tasks_and_pinned_program(
    temporal_client, task_queue, mongo_uri, mongo_db, make_writer
) -> None:
    program = compile_sources([("main.ffl", SOURCE)])
    store = MongoProgramStore(mongo_uri, mongo_db.name)
    digest = store.publish(program)
    handler_queue = task_queue + "-m"
    config = RuntimeConfig(
        mirror=True,
        queues={"m": handler_queue},
        retry=RetryConfig(maximum_attempts=3, initial_interval_seconds=0.05, backoff_coefficient=1.0,
                          maximum_interval_seconds=0.05, start_to_close_seconds=10),
    )  # fmt: skip
    tries: dict[int, int] = {}

    def inc(payload: dict) -> dict:
        tries[payload["n"]] = tries.get(payload["n"], 0) + 1
        if tries[payload["n"]] == 1:
            raise OSError("first attempt fails")
        return {"out": payload["n"] + 1}

    registry = HandlerRegistry()
    registry.register("m.Inc", inc)
    writer = make_writer(mongo_uri, mongo_db.name, program_store=store)
    workflow_id = "e2e-" + uuid.uuid4().hex[:8]
    interpreter = Worker(temporal_client, task_queue=task_queue, workflows=[FFLWorkflow],
                         activities=build_interpreter_activities(store, config, writer))  # fmt: skip
    handlers = Worker(temporal_client, task_queue=handler_queue,
                      activities=[build_handler_activity(registry, handler_queue, [MirrorTaskListener(writer)])])
    async with interpreter, handlers:
        handle = await temporal_client.start_workflow("m.Main", {"n": 1}, id=workflow_id, task_queue=task_queue)
        assert await handle.result() == {"total": 3}
        run_id = handle.result_run_id
    assert writer.flush(20)

    runner = mongo_db.runners.find_one({"temporal_workflow_id": workflow_id})
    assert runner["uuid"] == ids.runner_uuid(workflow_id, run_id)
    assert runner["state"] == "completed" and runner["returns"] == {"total": 3}
    assert runner["parameters"] == [{"name": "n", "value": 1}]
    assert runner["program_hash"] == digest and runner["flow_id"] == ids.flow_uuid(digest)
    assert runner["compiled_ast"]["facets"]["m.Main"]["kind"] == "workflow"
    assert runner["end_time"] >= runner["start_time"] > 0
    steps = {s["path"].rsplit("/", 1)[-1]: s for s in mongo_db.steps.find({"runner_id": runner["uuid"]})}
    assert set(steps) == {"", "a", "b", "b0", "yield Main"}
    assert {name: s["object_type"] for name, s in steps.items()} == {
        "": "Workflow", "a": "VariableAssignment", "b": "VariableAssignment", "b0": "AndThen",
        "yield Main": "YieldAssignment"}  # fmt: skip
    assert all((s["lifecycle"], s["state"]) == ("completed", "state.statement.Complete") for s in steps.values())
    assert steps[""]["uuid"] == runner["step_id"] and steps["b0"]["container_id"] == runner["step_id"]
    assert steps["a"]["block_id"] == steps["b"]["block_id"] == steps["b0"]["uuid"]
    assert steps["yield Main"]["facets"]["returns"] == {"total": 3}
    assert all(s["flow_id"] == ids.flow_uuid(digest) for s in steps.values())
    assert steps["b"]["facets"] == {"name": "m.Inc", "params": {"n": 2}, "returns": {"out": 3}}
    tasks = list(mongo_db.tasks.find({"runner_id": runner["uuid"]}))
    assert len(tasks) == 2
    for task in tasks:
        assert task["flow_id"] == ids.flow_uuid(digest)
        step = next(s for s in steps.values() if s["uuid"] == task["step_id"])
        assert task["state"] == "completed" and task["retry_count"] == 1
        assert task["returns"] == step["facets"]["returns"] and task["data"] == step["facets"]["params"]
        assert task["task_list_name"] == handler_queue
    view = load_run(mongo_db, workflow_id)
    assert view is not None and len(view.steps) == 4  # the root is the header
    text = render_run(view)
    assert f"m.Main  workflow {workflow_id}  run {run_id}  completed" in text
    assert "[task completed on " in text and "1 retries]" in text
    out = io.StringIO()
    assert status_from_mongo(workflow_id, mongo_uri, mongo_db.name, out) == 0
    assert out.getvalue().strip() == text
    store.close()
