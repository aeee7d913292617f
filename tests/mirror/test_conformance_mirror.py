"""Every conformance case, run on the dev server with the mirror on, leaves documents in the original runtime's schema.

Programs are published to MongoDB (flows, workflows) and loaded from there
by the interpreter worker; the handler worker mirrors tasks and the
handlers' ``_step_log`` lines; both workers register in ``servers``. Then
every collection is checked field by field against docs/mirror.md's tables
(the indexes included), every run is checked as one tree from its root
step, states against the lifecycle table, log entries for their order, and
the documents against what the runs did. A second test cancels a run whose
handler is busy and checks the running run's view, then the cancelled one's.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections import Counter

import pytest

from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.mirror import MirrorSession, MongoProgramStore, ids, schema
from interpreter.cli.worker_main import build_worker
from interpreter.compiler import compile_sources
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.constants import MEMO_PROGRAM_HASH
from interpreter.program.serialize import content_hash
from tests import conformance_suite as suite
from tests.mirror.draining import drain_and_close
from tests.mirror.schema_checks import (
    check_documents,
    check_indexes,
    check_order,
    check_references,
    check_states,
    check_tree,
)

FAST = RetryConfig(maximum_attempts=1, initial_interval_seconds=0.1, backoff_coefficient=1.0,
                   maximum_interval_seconds=0.1, start_to_close_seconds=20)  # fmt: skip


def logged(name: str, fn):
    """The handler, also writing one ``_step_log`` line per call."""

    def handler(payload):
        payload["_step_log"](f"{name} handling {sorted(dict(payload))}")
        return fn(payload)

    return handler


def statements(node, found: set[str]) -> set[str]:
    """Every StepStmt id in an original-shaped AST."""
    if isinstance(node, dict):
        if node.get("type") == "StepStmt":
            found.add(node["id"])
        for value in node.values():
            statements(value, found)
    elif isinstance(node, list):
        for value in node:
            statements(value, found)
    return found


def declared_workflows(ast: dict) -> set[str]:
    names = set()
    for decl in ast["declarations"]:
        inner = decl["declarations"] if decl["type"] == "Namespace" else [decl]
        prefix = decl["name"] + "." if decl["type"] == "Namespace" else ""
        names |= {prefix + d["name"] for d in inner if d["type"] == "WorkflowDecl"}
    return names


@pytest.mark.slow
async def test_every_conformance_case_is_mirrored_in_the_original_schema(temporal_client, mongo_uri, mongo_db,
                                                                        tmp_path):  # fmt: skip
    store = MongoProgramStore(mongo_uri, mongo_db.name)
    queue = "ffl-" + uuid.uuid4().hex[:8]
    handler_queue = queue + "-h"
    registry = HandlerRegistry()
    programs, cases, event_facets = {}, [], set()
    for path in suite.valid_folders():
        folder = suite.folder(path.name)
        program = compile_sources(suite.sources(folder))
        digest = store.publish(program)
        programs[digest] = program
        event_facets |= {n for n, d in program.facets.items() if d.kind == "event" or d.prompt is not None}
        loaded = suite.handlers(folder)
        for name in loaded.names():
            registry.register(name, logged(name, loaded.lookup(name)))
        cases += [(folder.name, digest, case) for case in suite.cases_of(folder)]
    assert len(programs) > 20 and len(cases) > 100
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

    async def run(digest: str, case: suite.Case) -> tuple[str, str, dict | None, str | None]:
        handle = await temporal_client.start_workflow(case.workflow, case.inputs,
                                                      id="conf-" + uuid.uuid4().hex[:10], task_queue=queue,
                                                      memo={MEMO_PROGRAM_HASH: digest})  # fmt: skip
        try:
            return handle.id, handle.result_run_id or "", await asyncio.wait_for(handle.result(), 120), None
        except Exception as err:  # noqa: BLE001 - an expected failure is checked below
            return handle.id, (await handle.describe()).run_id, None, f"{err} {getattr(err, 'cause', '')}"

    async with workers[0], workers[1]:
        outcomes = await asyncio.gather(*(run(digest, case) for _, digest, case in cases))
    assert await asyncio.to_thread(drain_and_close, interpreter_side)
    assert await asyncio.to_thread(drain_and_close, handler_side)
    for (_, _, case), (_, _, result, error) in zip(cases, outcomes, strict=True):
        case.check(result, error)

    # ---- every document of every collection, field by field; indexes; ids; the trees; states; order
    counts = check_documents(mongo_db)
    check_indexes(mongo_db)
    check_references(mongo_db)
    sizes = check_tree(mongo_db)
    seen = check_states(mongo_db)
    check_order(mongo_db)
    assert counts["flows"] == len(programs) and counts["runners"] == len(sizes) >= len(cases)
    assert counts["workflows"] == sum(len(p.workflows) for p in programs.values()) + counts["runners"]
    object_types = {object_type for object_type, _ in seen}
    assert set(schema.STEP_OBJECT_TYPES) - {"Block"} <= object_types
    assert {lifecycle for _, lifecycle in seen} >= {"completed", "caught", "failed"}
    # the original dashboard's own unique index over statement, block and container holds (null for blocks)
    mongo_db.steps.create_index([("statement_id", 1), ("block_id", 1), ("container_id", 1)], unique=True,
                                partialFilterExpression={"statement_id": {"$type": "string"}}, name="dedup")
    assert mongo_db.steps.count_documents({"object_type": {"$in": sorted(schema.BLOCK_TYPES)},
                                           "statement_id": {"$ne": None}}) == 0  # fmt: skip

    # ---- flows and workflows: what was published, in the shapes the dashboard reads
    for digest, program in programs.items():
        flow = mongo_db.flows.find_one({"uuid": ids.flow_uuid(digest)})
        assert flow["program_hash"] == digest == content_hash(program)
        assert sorted(w["name"] for w in flow["workflows"]) == sorted(program.workflows)
        assert declared_workflows(flow["compiled_ast"]) == set(program.workflows)
        assert sorted(f["name"] for f in flow["facets"]) == sorted(n for n, d in program.facets.items()
                                                                   if d.kind != "workflow")  # fmt: skip
        namespaces = {n["uuid"] for n in flow["namespaces"]}
        assert all(f["namespace_id"] in namespaces or f["namespace_id"] == "" for f in flow["facets"])
        for name in program.workflows:
            definition = mongo_db.workflows.find_one({"uuid": ids.workflow_uuid(digest, name)})
            assert (definition["name"], definition["flow_id"], definition["version"]) == (name, flow["uuid"], digest)

    # ---- runners, their roots, steps, tasks and logs, case by case
    server = mongo_db.servers.find_one({"service_name": "handlers"})
    for (name, digest, case), (workflow_id, run_id, result, error) in zip(cases, outcomes, strict=True):
        runner = mongo_db.runners.find_one({"uuid": ids.runner_uuid(workflow_id, run_id)})
        flow_ast = mongo_db.flows.find_one({"uuid": ids.flow_uuid(digest)})["compiled_ast"]
        assert runner["program_hash"] == digest and runner["workflow"]["name"] == case.workflow, name
        assert runner["workflow_id"] == ids.run_workflow_uuid(workflow_id, run_id)
        assert (runner["temporal_workflow_id"], runner["temporal_run_id"]) == (workflow_id, run_id)
        assert {p["name"]: p["value"] for p in runner["parameters"]}.items() >= case.inputs.items()
        assert runner["compiled_ast"]["facets"][case.workflow]["kind"] == "workflow"
        assert runner["workflow_ast"] == runner["compiled_ast"]["facets"][case.workflow]
        assert runner["duration"] == runner["end_time"] - runner["start_time"] >= 0
        assert runner["workflow"]["date"] == runner["start_time"]
        steps = {s["path"]: s for s in mongo_db.steps.find({"workflow_id": runner["workflow_id"]})}
        root = steps[""]
        assert root["uuid"] == runner["step_id"] and root["facet_name"] == case.workflow
        assert {k: v["value"] for k, v in root["attributes"]["params"].items()}.items() >= case.inputs.items()
        if error is None:
            assert (runner["state"], runner["error"], root["lifecycle"]) == ("completed", None, "completed"), name
            assert runner["returns"] == result
            assert {k: v["value"] for k, v in root["attributes"]["returns"].items()} == result
        else:
            assert (runner["state"], root["lifecycle"], root["state"]) == ("failed", "failed", "state.statement.Error")
            assert all(text in runner["error"]["message"] for text in case.error_contains), name
            failed = [s for s in steps.values() if s["lifecycle"] == "failed" and s["object_type"] != "Workflow"]
            assert failed or f"workflow '{case.workflow}' failed" in runner["error"]["message"], name
            for step in failed:
                errors = list(mongo_db.step_logs.find({"step_id": step["uuid"], "level": "error"}))
                assert errors and step["error"]["message"] in errors[-1]["message"], (name, step["path"])
        known_statements = statements(flow_ast, set())
        for step in steps.values():
            assert step["uuid"] == ids.step_uuid(workflow_id, run_id, step["path"])
            final = mongo_db.step_logs.find_one({"uuid": ids.log_uuid("step-state", step["uuid"], step["lifecycle"])})
            assert final is not None and final["state"] == step["state"], (name, step["path"])
            if step["object_type"] in ("VariableAssignment", "SchemaInstantiation"):
                assert step["statement_name"] == step["path"].rsplit("/", 1)[-1] and step["facet_name"]
                assert step["statement_id"] in known_statements, (name, step["statement_id"])
                assert step["timestamp"]["created"] <= step["timestamp"]["started"]
                if step["lifecycle"] != "failed":
                    params = {k: v["value"] for k, v in step["attributes"]["params"].items()}
                    assert params == step["facets"]["params"] == {p["name"]: p["value"] for p in step["parameters"]}
        event_steps = {s["uuid"]: s for s in steps.values() if s.get("facet_name") in event_facets
                       and s["object_type"] == "VariableAssignment"}  # fmt: skip
        tasks = list(mongo_db.tasks.find({"workflow_id": runner["workflow_id"]}))
        assert {t["step_id"] for t in tasks} <= set(event_steps) and len(tasks) == len({t["step_id"] for t in tasks})
        for task in tasks:
            step = event_steps[task["step_id"]]
            assert task["state"] in ("completed", "failed") and (task["retry_count"], task["attempt"]) == (0, 1)
            assert task["task_list_name"] == handler_queue and task["name"] == step["facet_name"]
            assert task["server_id"] == server["uuid"]
            params = step["facets"]["params"]
            if programs[digest].facets[task["name"]].script is None:
                assert task["data"] == params
            else:  # the seed's lifecycle: the facet's script ran first, its keys joined the handler's payload
                assert task["data"].items() > params.items()
            assert (task["error"] is None) == (task["state"] == "completed")
            waiting = mongo_db.step_logs.find_one({"uuid": ids.log_uuid("step-state", step["uuid"], "waiting")})
            assert waiting["state"] == "state.EventTransmit"
            lines = list(mongo_db.logs.find({"object_id": task["uuid"], "details.change": {"$ne": "state"}}))
            assert [(log["note_originator"], log["object_type"]) for log in lines] == [("agent", "task")]
            assert lines[0]["message"].startswith(f"{task['name']} handling ")
            handler_entries = list(mongo_db.step_logs.find({"step_id": step["uuid"], "source": "handler"}))
            assert [e["message"] for e in handler_entries] == [lines[0]["message"]]
            changes = sorted(mongo_db.logs.find({"object_id": task["uuid"], "details.change": "state"}),
                             key=lambda log: log["order"])  # fmt: skip
            assert [log["state"] for log in changes] == ["pending", "running", task["state"]]
        changes = sorted(mongo_db.logs.find({"object_id": runner["uuid"]}), key=lambda log: log["order"])
        assert [log["state"] for log in changes] == ["created", "running", runner["state"]]
    assert mongo_db.tasks.count_documents({"state": {"$nin": ["completed", "failed"]}}) == 0

    # ---- servers: one per worker session, shut down, topics = its queues
    servers = {s["service_name"]: s for s in mongo_db.servers.find({})}
    assert set(servers) == {"interpreter", "handlers"}
    assert servers["interpreter"]["topics"] == [queue]
    assert servers["handlers"]["topics"] == [handler_queue]
    assert servers["handlers"]["handlers"] == registry.names()
    handled = sum(h["handled"] + h["not_handled"] for h in servers["handlers"]["handled"])
    assert handled == mongo_db.tasks.count_documents({})
    for server in servers.values():
        assert server["state"] == "shutdown" and server["ping_time"] >= server["start_time"]
    store.close()


HOLD = """
namespace hold {
    event facet Wait(n: Long) => (n: Long)
    event facet Quick(n: Long) => (n: Long)
    workflow Hold(ns: [Long]) => (n: Long) andThen {
        first = Quick(n = 1)
        yield Hold(n = first.n)
    } andThen foreach n in $.ns {
        w = Wait(n = $.n)
    }
}
"""


async def test_a_running_then_cancelled_run_is_mirrored_as_the_dashboard_reads_it(temporal_client, mongo_uri,
                                                                                   mongo_db, tmp_path):  # fmt: skip
    store = MongoProgramStore(mongo_uri, mongo_db.name)
    store.publish(compile_sources([("hold.ffl", HOLD)]))
    queue = "ffl-" + uuid.uuid4().hex[:8]
    entered, release = threading.Semaphore(0), threading.Event()

    def wait(payload):
        payload["_step_log"](f"waiting with {payload['n']}", "warning")
        entered.release()
        release.wait(30)
        return {"n": payload["n"]}

    registry = HandlerRegistry()
    registry.register("hold.Wait", wait)
    registry.register("hold.Quick", lambda p: {"n": p["n"]})
    config = RuntimeConfig(retry=FAST, mirror=True, queues={"hold": queue + "-h"})
    interpreter_side = MirrorSession(mongo_uri, mongo_db.name, program_store=store, queues=[queue],
                                     service="interpreter", spool_dir=tmp_path).start()  # fmt: skip
    handler_side = MirrorSession(mongo_uri, mongo_db.name, queues=[queue + "-h"], handlers=registry.names(),
                                 service="handlers", spool_dir=tmp_path).start()  # fmt: skip
    workers = [build_worker(temporal_client, queue, HandlerRegistry(), store=store, config=config, interpreter=True,
                            mirror=interpreter_side.writer),
               build_worker(temporal_client, queue + "-h", registry, config=config, listeners=[handler_side.listener])]
    try:
        async with workers[0], workers[1]:
            handle = await temporal_client.start_workflow("hold.Hold", {"ns": [1, 2]}, id="hold-" + uuid.uuid4().hex[:8],
                                                          task_queue=queue)  # fmt: skip
            for _ in range(2):
                assert await asyncio.to_thread(entered.acquire, True, 30)
            await asyncio.sleep(0.5)  # the workflow's records of the scheduled tasks are on their way
            assert await asyncio.to_thread(interpreter_side.writer.flush, 20)
            assert await asyncio.to_thread(handler_side.writer.flush, 20)
            run_id = (await handle.describe()).run_id
            runner = mongo_db.runners.find_one({"uuid": ids.runner_uuid(handle.id, run_id)})
            steps = {s["path"]: s for s in mongo_db.steps.find({"workflow_id": runner["workflow_id"]})}
            # ---- still running: each step in the state the dashboard shows for it
            assert runner["state"] == "running"
            assert {p: (s["object_type"], s["state"]) for p, s in steps.items()} == {
                "": ("Workflow", "state.statement.blocks.Continue"),
                "b0": ("AndThen", "state.statement.Complete"),
                "b0/first": ("VariableAssignment", "state.statement.Complete"),
                "b0/yield Hold": ("YieldAssignment", "state.statement.Complete"),
                "b1": ("AndMap", "state.block.execution.Continue"),
                "b1/foreach[0]": ("AndThen", "state.block.execution.Continue"),
                "b1/foreach[1]": ("AndThen", "state.block.execution.Continue"),
                "b1/foreach[0]/w": ("VariableAssignment", "state.EventTransmit"),
                "b1/foreach[1]/w": ("VariableAssignment", "state.EventTransmit"),
            }
            assert [steps[f"b1/foreach[{i}]"]["foreach_value"] for i in (0, 1)] == [1, 2]
            busy = list(mongo_db.tasks.find({"state": "running"}))
            assert len(busy) == 2 and {t["server_id"] for t in busy} == {handler_side.registration.uuid}
            assert mongo_db.servers.find_one({"uuid": handler_side.registration.uuid})["state"] == "running"
            lines = [e["message"] for e in mongo_db.step_logs.find({"step_id": steps["b1/foreach[1]/w"]["uuid"]},
                                                                   sort=[("order", 1)])]  # fmt: skip
            assert [line.split(" (")[0].split(":")[0] for line in lines] == [
                "Step started", "Step waits for its handler", "Task claimed", "waiting with 2"]
            # ---- cancelled while its handlers run
            await handle.cancel()
            with pytest.raises(Exception):  # noqa: B017 - the run ends cancelled
                await asyncio.wait_for(handle.result(), 20)
            assert await asyncio.to_thread(interpreter_side.writer.flush, 20)
            runner = mongo_db.runners.find_one({"uuid": runner["uuid"]})
            assert runner["state"] == "cancelled" and runner["end_time"] >= runner["start_time"]
            steps = {s["path"]: s for s in mongo_db.steps.find({"workflow_id": runner["workflow_id"]})}
            assert (steps[""]["lifecycle"], steps[""]["state"]) == ("cancelled", "state.statement.Error")
            unfinished = ("b1", "b1/foreach[0]", "b1/foreach[1]", "b1/foreach[0]/w", "b1/foreach[1]/w")
            for path in unfinished:
                assert steps[path]["state"] == "state.statement.Error", path
                assert steps[path]["lifecycle"] in ("cancelled", "failed"), path
            assert steps["b0/first"]["state"] == "state.statement.Complete"
            assert Counter(t["state"] for t in mongo_db.tasks.find({})) == Counter({"completed": 1, "canceled": 2})
            root_lines = [e["message"] for e in mongo_db.step_logs.find({"step_id": steps[""]["uuid"]})]
            assert "workflow cancelled" in root_lines
    finally:
        release.set()
        interpreter_side.close(20)
        handler_side.close(20)
        store.close()
    check_documents(mongo_db)
    check_references(mongo_db)
    check_tree(mongo_db)
    check_states(mongo_db)
    check_order(mongo_db)
