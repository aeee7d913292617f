"""The conformance cases, run on the dev server with the mirror on, leave documents in the original runtime's schema.

Programs are published to MongoDB (flows, workflows) and loaded from there
by the interpreter worker; the handler worker mirrors tasks and the
handlers' ``_step_log`` lines; both workers register in ``servers``. Then
every collection is checked field by field against the original schema (docs/mirror.md), the indexes
included, and the documents are checked against what the runs did.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter

import pytest

from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.mirror import MirrorSession, MongoProgramStore, ids
from interpreter.cli.worker_main import build_worker
from interpreter.compiler import compile_sources
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.serialize import content_hash
from tests import conformance_suite as suite
from tests.mirror.seed_schema import check_documents, check_indexes, check_references

FAST = RetryConfig(maximum_attempts=2, initial_interval_seconds=0.1, backoff_coefficient=1.0,
                   maximum_interval_seconds=0.1, start_to_close_seconds=20)  # fmt: skip
RANK = {"created": 0, "pending": 0, "running": 1, "completed": 2}


def logged(name: str, fn):
    """The handler, also writing one ``_step_log`` line per call."""

    def handler(payload):
        payload["_step_log"](f"{name} handling {sorted(dict(payload))}")
        return fn(payload)

    return handler


async def test_conformance_runs_are_mirrored_in_the_original_schema(temporal_client, mongo_uri, mongo_db, tmp_path):
    case_dirs = suite.core_folders()
    store = MongoProgramStore(mongo_uri, mongo_db.name)
    queue = "ffl-" + uuid.uuid4().hex[:8]
    handler_queue = queue + "-h"
    registry = HandlerRegistry()
    programs, cases, event_facets = {}, [], set()
    for case_dir in case_dirs:
        program = compile_sources(suite.sources(case_dir))
        programs[store.publish(program)] = program
        event_facets |= {n for n, d in program.facets.items() if d.kind == "event" or d.prompt is not None}
        loaded = suite.handlers(case_dir)
        for name in loaded.names():
            registry.register(name, logged(name, loaded.lookup(name)))
        cases += suite.cases_of(case_dir)
    config = RuntimeConfig(retry=FAST, mirror=True, queues=dict.fromkeys(sorted(event_facets), handler_queue))
    interpreter_side = MirrorSession(mongo_uri, mongo_db.name, program_store=store, queues=[queue],
                                     service="interpreter", spool_dir=tmp_path, ping_interval=0.3).start()
    handler_side = MirrorSession(mongo_uri, mongo_db.name, queues=[handler_queue], handlers=registry.names(),
                                 service="handlers", spool_dir=tmp_path, ping_interval=0.3).start()
    workers = [
        build_worker(temporal_client, queue, HandlerRegistry(), store=store, config=config, interpreter=True,
                     mirror=interpreter_side.writer, allow_scripts=True),
        build_worker(temporal_client, handler_queue, registry, config=config, listeners=[handler_side.listener]),
    ]  # fmt: skip

    async def run(case: suite.Case) -> tuple[str, str, dict]:
        handle = await temporal_client.start_workflow(case.workflow, case.inputs, id="conf-" + uuid.uuid4().hex[:10],
                                                      task_queue=queue)  # fmt: skip
        result = await asyncio.wait_for(handle.result(), 60)
        return handle.id, handle.result_run_id, result

    async with workers[0], workers[1]:
        outcomes = await asyncio.gather(*(run(case) for case in cases))
    assert await asyncio.to_thread(interpreter_side.close, 20)
    assert await asyncio.to_thread(handler_side.close, 20)
    for case, (_, _, result) in zip(cases, outcomes, strict=True):
        assert case.succeeds, f"{case.where}: the mirror test runs only succeeding cases"
        assert result == case.outputs, case.where

    # ---- every document of every collection, field by field; the indexes
    counts = check_documents(mongo_db)
    check_indexes(mongo_db)
    check_references(mongo_db)
    assert counts["flows"] == len(case_dirs) and counts["runners"] == len(cases)
    assert counts["workflows"] == sum(len(p.workflows) for p in programs.values())

    # ---- flows and workflows: what was published, loadable by hash
    for digest, program in programs.items():
        flow = mongo_db.flows.find_one({"uuid": ids.flow_uuid(digest)})
        assert flow["program_hash"] == digest == content_hash(program)
        assert sorted(w["name"] for w in flow["workflows"]) == sorted(program.workflows)
        for name in program.workflows:
            definition = mongo_db.workflows.find_one({"uuid": ids.workflow_uuid(digest, name)})
            assert (definition["name"], definition["flow_id"], definition["version"]) == (name, flow["uuid"], digest)

    # ---- runners, steps, tasks and logs of each run
    object_types: Counter[str] = Counter()
    for case, (workflow_id, run_id, result) in zip(cases, outcomes, strict=True):
        runner = mongo_db.runners.find_one({"uuid": ids.runner_uuid(workflow_id, run_id)})
        digest = runner["program_hash"]
        assert digest in programs and case.workflow in programs[digest].workflows
        assert runner["state"] == "completed" and runner["returns"] == result and runner["error"] is None
        assert runner["workflow"]["name"] == case.workflow and runner["workflow"]["version"] == digest
        assert {p["name"]: p["value"] for p in runner["parameters"]}.items() >= case.inputs.items()
        assert runner["compiled_ast"]["facets"][case.workflow]["kind"] == "workflow"
        assert runner["workflow_ast"] == runner["compiled_ast"]["facets"][case.workflow]
        assert runner["duration"] == runner["end_time"] - runner["start_time"] >= 0
        steps = list(mongo_db.steps.find({"runner_id": runner["uuid"]}))
        object_types.update(s["object_type"] for s in steps)
        assert all(s["state"] == "completed" and s["error"] is None for s in steps), steps
        assert all(s["workflow_id"] == workflow_id and s["run_id"] == run_id for s in steps)
        for step in steps:
            assert step["uuid"] == ids.step_uuid(workflow_id, run_id, step["path"])
            assert step["is_starting_step"] == (step["container_type"] == "Runner")
            if step["object_type"] == "VariableAssignment":
                assert step["statement_id"] and step["facets"]["name"]
                assert step["timestamp"]["created"] <= step["timestamp"]["started"] <= step["timestamp"]["completed"]
                assert {p["name"]: p["value"] for p in step["parameters"]} == step["facets"]["params"]
        event_steps = {s["uuid"]: s for s in steps if (s.get("facets") or {}).get("name") in event_facets}
        tasks = list(mongo_db.tasks.find({"runner_id": runner["uuid"]}))
        assert {t["step_id"] for t in tasks} == set(event_steps) and len(tasks) == len(event_steps) > 0
        for task in tasks:
            step = event_steps[task["step_id"]]
            assert (task["state"], task["retry_count"], task["attempt"]) == ("completed", 0, 1)
            assert task["task_list_name"] == handler_queue and task["name"] == step["facets"]["name"]
            assert task["data"]["payload"] == step["facets"]["params"] and task["error"] is None
            changes = mongo_db.logs.find({"object_id": task["uuid"], "details.change": "state"})
            states = [log["state"] for log in sorted(changes, key=lambda log: (log["order"], RANK[log["state"]]))]
            assert states == ["pending", "running", "completed"]
            handler_logs = list(mongo_db.logs.find({"object_id": task["uuid"], "details.change": {"$ne": "state"}}))
            assert [(log["note_originator"], log["object_type"]) for log in handler_logs] == [("agent", "task")]
            assert handler_logs[0]["message"].startswith(f"{task['name']} handling ")
        changes = mongo_db.logs.find({"object_id": runner["uuid"]})
        runner_states = [log["state"] for log in sorted(changes, key=lambda log: (log["order"], RANK[log["state"]]))]
        assert runner_states == ["created", "running", "completed"]
    assert {"VariableAssignment", "AndThen", "AndMap", "AndMatch", "YieldAssignment"} <= set(object_types)
    assert mongo_db.tasks.count_documents({"state": {"$ne": "completed"}}) == 0

    # ---- servers: one per worker session, shut down, topics = its queues
    servers = {s["service_name"]: s for s in mongo_db.servers.find({})}
    assert set(servers) == {"interpreter", "handlers"}
    assert servers["interpreter"]["topics"] == [queue]
    assert servers["handlers"]["topics"] == [handler_queue]
    assert servers["handlers"]["handlers"] == registry.names()
    handled = sum(h["handled"] for h in servers["handlers"]["handled"])
    assert handled == mongo_db.tasks.count_documents({})
    for server in servers.values():
        assert server["state"] == "shutdown" and server["ping_time"] >= server["start_time"]
    store.close()


FAILING = """
namespace f {
    event facet Ok(x: Long) => (v: Long)
    event facet Boom(x: Long) => (v: Long)
    workflow Caught(x: Long) => (v: Long, msg: String) andThen {
        bad = Boom(x = $.x) catch {
            fix = Ok(x = 0)
            yield Boom(v = fix.v)
        }
        yield Caught(v = bad.v, msg = bad.error)
    }
    workflow Fails(x: Long) => (v: Long) andThen {
        first = Ok(x = $.x)
        bad = Boom(x = first.v)
        yield Fails(v = bad.v)
    }
}
"""


async def test_failed_and_caught_runs_are_mirrored_in_the_seed_schema(temporal_client, mongo_uri, mongo_db, tmp_path):
    from temporalio.client import WorkflowFailureError

    from interpreter.compiler import compile_sources

    store = MongoProgramStore(mongo_uri, mongo_db.name)
    store.publish(compile_sources([("f.ffl", FAILING)]))
    queue = "ffl-" + uuid.uuid4().hex[:8]
    config = RuntimeConfig(retry=FAST, mirror=True, queues={"f": queue + "-f"})
    registry = HandlerRegistry()
    registry.register("f.Ok", lambda p: {"v": p["x"] + 1})

    def boom(payload):
        payload["_step_log"]("about to fail", "error")
        raise ValueError(f"boom {payload['x']}")

    registry.register("f.Boom", boom)
    with MirrorSession(mongo_uri, mongo_db.name, program_store=store, queues=[queue, queue + "-f"],
                       handlers=registry.names(), spool_dir=tmp_path) as session:  # fmt: skip
        workers = [build_worker(temporal_client, queue, HandlerRegistry(), store=store, config=config,
                                interpreter=True, mirror=session.writer),
                   build_worker(temporal_client, queue + "-f", registry, config=config,
                                listeners=[session.listener])]  # fmt: skip
        async with workers[0], workers[1]:
            caught = await temporal_client.start_workflow("f.Caught", {"x": 3}, id="caught-" + uuid.uuid4().hex[:8],
                                                          task_queue=queue)  # fmt: skip
            fails = await temporal_client.start_workflow("f.Fails", {"x": 3}, id="fails-" + uuid.uuid4().hex[:8],
                                                         task_queue=queue)  # fmt: skip
            assert await caught.result() == {"v": 1, "msg": "boom 3"}
            with pytest.raises(WorkflowFailureError):
                await fails.result()
    check_documents(mongo_db)
    check_indexes(mongo_db)
    check_references(mongo_db)

    runner = mongo_db.runners.find_one({"workflow_id": caught.id})
    assert runner["state"] == "completed"
    step = mongo_db.steps.find_one({"runner_id": runner["uuid"], "path": "b0/bad"})
    assert step["state"] == "caught" and step["error"]["message"] == "boom 3"
    assert step["facets"]["returns"]["v"] == 1
    assert mongo_db.steps.find_one({"runner_id": runner["uuid"], "path": "b0/bad/catch"})["object_type"] == "AndThen"
    task = mongo_db.tasks.find_one({"step_id": step["uuid"]})
    assert (task["state"], task["retry_count"]) == ("failed", FAST.maximum_attempts - 1)
    assert task["error"] == {"message": "f.Boom: boom 3", "type": "ValueError"}

    runner = mongo_db.runners.find_one({"workflow_id": fails.id})
    assert runner["state"] == "failed" and "boom 4" in runner["error"]["message"]
    assert runner["end_time"] >= runner["start_time"] and runner["returns"] is None
    states = {s["path"]: s["state"] for s in mongo_db.steps.find({"runner_id": runner["uuid"]})}
    assert states == {"b0": "failed", "b0/first": "completed", "b0/bad": "failed"}
    bad = mongo_db.steps.find_one({"runner_id": runner["uuid"], "path": "b0/bad"})
    assert "boom 4" in bad["error"]["message"]
    errors = list(mongo_db.logs.find({"runner_id": runner["uuid"], "note_type": "error"}))
    assert {(e["object_type"], e["state"]) for e in errors} >= {("runner", "failed"), ("step", "failed"),
                                                               ("task", "failed"), ("task", "")}  # fmt: skip
    assert all(e["note_importance"] == 1 for e in errors)
    store.close()
