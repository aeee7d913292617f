"""Runtime plumbing of FFLWorkflow: program pinning, steps query, mirror records, queues and retries."""

from __future__ import annotations

import threading
import uuid

from interpreter.activities.program_store import LocalProgramStore
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.constants import MEMO_PROGRAM_HASH
from interpreter.program.serialize import content_hash

from .harness import FAST_RETRY, compile_text, run_ffl

VERSIONED = """
namespace v {
    workflow Ver() => (version: Long) andThen { yield Ver(version = %d) }
}
"""


async def test_program_hash_is_pinned_in_memo_and_history(temporal_client, tmp_path):
    one, two = compile_text(VERSIONED % 1), compile_text(VERSIONED % 2)
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(one)
    run = await run_ffl(temporal_client, two, "v.Ver", tmp_path=tmp_path)  # publishes v2: now the latest
    assert run.result == {"version": 2}
    memo = await (await run.handle.describe()).memo()
    assert memo[MEMO_PROGRAM_HASH] == content_hash(two)
    # A starter that pins the older hash gets the older program.
    run = await run_ffl(temporal_client, two, "v.Ver", tmp_path=tmp_path,
                        memo={MEMO_PROGRAM_HASH: content_hash(one)})
    assert run.result == {"version": 1}


async def test_unknown_workflow_fails_naming_only_the_workflow(temporal_client, tmp_path):
    program = compile_text(VERSIONED % 1)
    run = await run_ffl(temporal_client, program, "v.Nope", tmp_path=tmp_path)
    assert run.error is not None
    # whoever can start a workflow learns nothing of what else is published, nor where
    assert "v.Nope" in run.message and "v.Ver" not in run.message and str(tmp_path) not in run.message
    assert run.error_type == "ProgramNotFound"


BODY = """
namespace b {
    event facet Fetch(x: Long) => (raw: Long, extra: Long)
    event facet Plus(v: Long) => (v: Long)
    event facet Fetch2(x: Long) => (raw: Long)
    /** An event facet with a body: the body runs after the handler, with the handler's returns kept. */
    event facet Rich(x: Long) => (raw: Long, extra: Long) andThen {
        p = Plus(v = $.x)
        yield Rich(extra = p.v)
    }
    workflow UseRich(x: Long) => (raw: Long, extra: Long) andThen {
        r = Rich(x = $.x)
        yield UseRich(raw = r.raw, extra = r.extra)
    }
}
"""


def rich(p):
    return {"raw": p["x"] * 10}


def plus(p):
    return {"v": p["v"] + 1}


async def test_event_facet_with_body_runs_it_after_the_handler(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, BODY, "b.UseRich", {"x": 3}, handlers={"b.Rich": rich, "b.Plus": plus},
                        tmp_path=tmp_path)
    assert run.error is None, run.message
    assert run.result == {"raw": 30, "extra": 4}
    steps = {s["path"]: s for s in run.steps}
    assert set(steps) == {"b0/r", "b0/r/b0/p"}
    assert steps["b0/r"] == {"path": "b0/r", "facet": "b.Rich", "state": "completed",
                             "returns": {"raw": 30, "extra": 4}, "error": None}


QUERY = """
namespace q {
    event facet Boom(x: Long) => (v: Long)
    workflow Q(x: Long) => (v: Long) andThen {
        a = Boom(x = $.x)
        yield Q(v = a.v)
    }
}
"""


def boom(p):
    raise RuntimeError("nope")


async def test_steps_query_reports_failed_steps_with_error(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, QUERY, "q.Q", {"x": 1}, handlers={"q.Boom": boom}, tmp_path=tmp_path)
    assert run.error_type == "RuntimeError"
    assert len(run.steps) == 1
    step = run.steps[0]
    assert step["path"] == "b0/a" and step["state"] == "failed" and step["returns"] is None
    assert "nope" in step["error"] and "q.Boom" in step["error"]
    description = await run.handle.describe()
    assert description.workflow_type == "q.Q"


class ListSink:
    """A MirrorSink keeping records in memory (the real one is Mongo, tested by the mirror's owner)."""

    def __init__(self):
        self.records: list[dict] = []
        self.lock = threading.Lock()

    def write(self, records):
        with self.lock:
            self.records.extend(records)


async def test_mirror_records_are_sent_before_the_run_ends(temporal_client, tmp_path):
    sink = ListSink()
    config = RuntimeConfig(retry=FAST_RETRY, mirror=True)
    run = await run_ffl(temporal_client, BODY, "b.UseRich", {"x": 3}, handlers={"b.Rich": rich, "b.Plus": plus},
                        tmp_path=tmp_path, config=config, mirror=sink)
    assert run.error is None, run.message
    kinds = [r["kind"] for r in sink.records]
    assert kinds[0] == "runner" and kinds[-1] == "runner"
    runner_states = [r["state"] for r in sink.records if r["kind"] == "runner"]
    assert runner_states == ["created", "running", "completed"]
    tasks = [(r["activity_id"], r["state"]) for r in sink.records if r["kind"] == "task"]
    assert tasks and all(state == "pending" for _, state in tasks)
    assert sink.records[-1]["returns"] == {"raw": 30, "extra": 4}
    assert sink.records[-1]["program_hash"]
    steps = [r for r in sink.records if r["kind"] == "step"]
    assert [(r["path"], r["state"]) for r in steps if r["path"] == "b0/r"] == [("b0/r", "running"),
                                                                              ("b0/r", "completed")]
    done = next(r for r in steps if r["path"] == "b0/r/b0/p" and r["state"] == "completed")
    assert done["statement_id"] == "b.Rich/b0/s0" and done["object_type"] == "VariableAssignment"
    assert done["params"] == {"v": 3} and done["returns"] == {"v": 4}
    assert (done["parent_path"], done["block_path"], done["root_path"]) == ("b0/r", "b0/r/b0", "b0/r")
    top = next(r for r in steps if r["path"] == "b0/r")
    assert (top["parent_path"], top["block_path"], top["root_path"]) == (None, "b0", "b0/r")
    assert all(r["workflow_id"] == run.handle.id for r in sink.records)


async def test_no_mirror_activity_without_mirror_config(temporal_client, tmp_path):
    sink = ListSink()
    run = await run_ffl(temporal_client, BODY, "b.UseRich", {"x": 3}, handlers={"b.Rich": rich, "b.Plus": plus},
                        tmp_path=tmp_path, mirror=sink)
    assert run.error is None
    assert sink.records == []


RETRY = """
namespace r {
    event facet Flaky(key: String) => (attempts: Long)
    workflow R(key: String) => (attempts: Long) andThen {
        f = Flaky(key = $.key)
        yield R(attempts = f.attempts)
    }
}
"""

attempts: dict[str, int] = {}


def flaky(p):
    attempts[p["key"]] = attempts.get(p["key"], 0) + 1
    if attempts[p["key"]] < 3:
        raise ConnectionError("try again")
    return {"attempts": attempts[p["key"]]}


async def test_retry_policy_comes_from_config_per_facet(temporal_client, tmp_path):
    quick = RetryConfig(maximum_attempts=3, initial_interval_seconds=0.05, backoff_coefficient=1.0,
                        maximum_interval_seconds=0.05, start_to_close_seconds=5)
    config = RuntimeConfig(retry=FAST_RETRY, facet_retry={"r.Flaky": quick})
    key = uuid.uuid4().hex
    run = await run_ffl(temporal_client, RETRY, "r.R", {"key": key}, handlers={"r.Flaky": flaky},
                        tmp_path=tmp_path, config=config)
    assert run.error is None, run.message
    assert run.result == {"attempts": 3}
    # Two attempts are not enough; a non-retryable type stops after one.
    key = uuid.uuid4().hex
    run = await run_ffl(temporal_client, RETRY, "r.R", {"key": key}, handlers={"r.Flaky": flaky}, tmp_path=tmp_path,
                        config=RuntimeConfig(retry=quick.model_copy(update={"maximum_attempts": 2})))
    assert run.error_type == "ConnectionError" and attempts[key] == 2
    stop = quick.model_copy(update={"non_retryable_error_types": ["ConnectionError"]})
    key = uuid.uuid4().hex
    run = await run_ffl(temporal_client, RETRY, "r.R", {"key": key}, handlers={"r.Flaky": flaky}, tmp_path=tmp_path,
                        config=RuntimeConfig(retry=stop))
    assert run.error_type == "ConnectionError" and attempts[key] == 1


async def test_queue_override_by_namespace_prefix(temporal_client, tmp_path):
    """Handlers on a queue named by config.queues (by namespace) answer; the default `r` queue is unused."""
    program = compile_text(RETRY)
    queue = "ffl-" + uuid.uuid4().hex[:8]
    config = RuntimeConfig(retry=FAST_RETRY, queues={"r": queue + "-handlers"})
    key = uuid.uuid4().hex
    attempts[key] = 5
    run = await run_ffl(temporal_client, program, "r.R", {"key": key}, handlers={"r.Flaky": flaky},
                        tmp_path=tmp_path, config=config, task_queue=queue, keep_queues=True, timeout=10)
    assert run.error is None, run.message
    assert run.result == {"attempts": 6}


async def test_a_failed_run_shows_the_users_message_not_the_interpreters_stack(temporal_client, tmp_path):
    source = """namespace f {
        event facet Parse(file: String) => (rows: Long)
        workflow Load(file: String) => (rows: Long) andThen {
            p = Parse(file = $.file)
            yield Load(rows = p.rows)
        }
    }"""

    def parse(payload: dict) -> dict:
        raise ValueError(f"cannot parse {payload['file']}")

    async def failures(handle):
        history = await handle.fetch_history()
        closed = [e.workflow_execution_failed_event_attributes.failure for e in history.events
                  if e.HasField("workflow_execution_failed_event_attributes")]
        attempts = [e.activity_task_failed_event_attributes.failure for e in history.events
                    if e.HasField("activity_task_failed_event_attributes")]
        return closed, attempts

    run = await run_ffl(temporal_client, source, "f.Load", {"file": "corrupt.csv"}, handlers={"f.Parse": parse},
                        tmp_path=tmp_path, inspect=failures)
    closed, attempts = run.inspected
    assert len(closed) == 1 and "cannot parse corrupt.csv" in closed[0].message
    assert closed[0].stack_trace == ""  # was the interpreter's frames (ffl_workflow.py, runner.py, ...)
    assert attempts and "in parse" in attempts[-1].cause.stack_trace + attempts[-1].stack_trace  # the handler's
