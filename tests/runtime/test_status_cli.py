"""``ffl status`` tells the truth, as a real subprocess against real runs on the session dev server.

The runs are served by in-process workers of this test (so a test decides
whether a queue has a worker); ``ffl status`` runs as a separate process, as
a person would call it: exit status by the run's state, the failing step,
facet and cause, ``scheduled (no worker polling queue X)`` versus ``running
on worker Y``, retries with the last error, cancelled steps as cancelled,
``--json``, ``--watch`` and ``--graph``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import uuid
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import NonRetryableError
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.workflows import FFLWorkflow, workflow_runner

from .harness import compile_text, isolated_config, registry_of

REPO = Path(__file__).resolve().parents[2]

PROGRAM = """namespace st {
    event facet Slow(x: Long) => (y: Long)
    event facet Flaky(x: Long) => (y: Long)
    event facet Boom(x: Long) => (y: Long)
    workflow Wait(x: Long) => (y: Long) andThen {
        a = Slow(x = $.x)
        yield Wait(y = a.y)
    }
    workflow Retry(x: Long) => (y: Long) andThen {
        a = Flaky(x = $.x)
        yield Retry(y = a.y)
    }
    workflow Fail(x: Long) => (y: Long) andThen {
        ok = Slow(x = 0)
        bad = Boom(x = ok.y)
        yield Fail(y = bad.y)
    }
    workflow Many(xs: Json) => (ys: Json = []) andThen foreach v in $.xs {
        s = Slow(x = $.v)
        yield Many(ys = [s.y])
    }
}
"""

HANDLER_IDENTITY = "status-test-handlers@here"


async def slow(payload):
    await asyncio.sleep(payload["x"])
    return {"y": payload["x"] + 1}


async def flaky(payload):
    if payload["_retry_count"] == 0:
        raise ValueError("flaky the first time")
    await asyncio.sleep(30)
    return {"y": 1}


def boom(payload):
    raise NonRetryableError(f"boom at {payload['x']}")


HANDLERS = {"st.Slow": slow, "st.Flaky": flaky, "st.Boom": boom}


async def ffl(*args: str, timeout: float = 90) -> tuple[int, str, str]:
    """``ffl ARGS`` as a subprocess, without blocking this loop (its workers keep serving)."""
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "interpreter", *args, cwd=REPO,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode(), err.decode()


class Served:
    """The interpreter worker (and, when asked, the handler worker) of one test."""

    def __init__(self, client, tmp_path: Path, *, handlers: bool = True, config: RuntimeConfig | None = None):
        self.client = client
        self.program = compile_text(PROGRAM)
        self.queue = "ffl-" + uuid.uuid4().hex[:10]
        self.handler_queue = self.queue + "-handlers"
        store = LocalProgramStore(tmp_path / "registry")
        store.publish(self.program)
        retry = RetryConfig(maximum_attempts=3, initial_interval_seconds=0.2, backoff_coefficient=1.0,
                            maximum_interval_seconds=0.2, start_to_close_seconds=60.0)
        self.config = isolated_config(self.program, self.handler_queue, config or RuntimeConfig(retry=retry))
        self.workers = [Worker(client, task_queue=self.queue, workflows=[FFLWorkflow],
                               workflow_runner=workflow_runner(),
                               activities=build_interpreter_activities(store, self.config))]
        if handlers:
            self.workers.append(Worker(client, task_queue=self.handler_queue, identity=HANDLER_IDENTITY,
                                       activities=[build_handler_activity(registry_of(HANDLERS),
                                                                          self.handler_queue)]))

    async def __aenter__(self) -> Served:
        for worker in self.workers:
            await worker.__aenter__()
        return self

    async def __aexit__(self, *exc) -> None:
        for worker in reversed(self.workers):
            await worker.__aexit__(*exc)

    async def start(self, workflow: str, inputs: dict):
        return await self.client.start_workflow(workflow, inputs, id="st-" + uuid.uuid4().hex[:12],
                                                task_queue=self.queue)


def status_args(address: str, handle, *extra: str) -> list[str]:
    return ["status", handle.id, "--address", address, "--timeout", "5", *extra]


async def wait_for_pending(handle, predicate, timeout: float = 20.0) -> None:
    """Until a pending activity of the run satisfies ``predicate`` (its raw description)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        description = await handle.describe()
        if any(predicate(p) for p in description.raw_description.pending_activities):
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the awaited pending activity never appeared")


async def test_completed_run_exits_0_with_json_counts_and_returns(temporal_client, temporal_service, tmp_path):
    async with Served(temporal_client, tmp_path) as served:
        handle = await served.start("st.Many", {"xs": [0, 0, 0]})
        assert await handle.result() == {"ys": [1, 1, 1]}
        code, out, err = await ffl(*status_args(temporal_service.address, handle, "--json"))
    assert code == 0, err
    status = json.loads(out)
    assert status["status"] == "completed" and status["exit_code"] == 0
    assert status["counts"]["done"] == 3 and status["counts"]["failed"] == 0
    assert status["returns"] == {"ys": [1, 1, 1]}
    assert status["namespace"] == "st" and len(status["program_hash"]) == 64
    assert {step["path"] for step in status["steps"]} == {f"b0/foreach[{i}]/s" for i in range(3)}


async def test_failed_run_exits_1_naming_step_facet_and_cause(temporal_client, temporal_service, tmp_path):
    async with Served(temporal_client, tmp_path) as served:
        handle = await served.start("st.Fail", {"x": 1})
        try:
            await handle.result()
        except WorkflowFailureError:
            pass
        code, out, err = await ffl(*status_args(temporal_service.address, handle))
        json_code, json_out, _ = await ffl(*status_args(temporal_service.address, handle, "--json"))
        graph_code, graph_out, graph_err = await ffl("graph", "--run", handle.id, "--address",
                                                     temporal_service.address)
    assert code == 1 and json_code == 1, err
    assert "failed at step Fail › bad (st.Boom): NonRetryableError: boom at 1" in out
    assert "✗ bad  st.Boom  [failed]" in out and "✓ ok  st.Slow  [done]" in out
    failure = json.loads(json_out)["failure"]
    assert failure == {"step": "b0/bad", "facet": "st.Boom", "error_type": "NonRetryableError",
                       "cause": "boom at 1", "message": failure["message"]}
    assert graph_code == 0, graph_err
    assert "classDef failed" in graph_out and "classDef done" in graph_out
    assert "class n_b0_bad failed" in graph_out and "class n_b0_ok done" in graph_out


async def test_step_without_a_worker_on_its_queue_is_scheduled_not_running(temporal_client, temporal_service,
                                                                          tmp_path):
    async with Served(temporal_client, tmp_path, handlers=False) as served:
        handle = await served.start("st.Wait", {"x": 1})
        await wait_for_pending(handle, lambda p: p.activity_id == "b0/a")
        code, out, err = await ffl(*status_args(temporal_service.address, handle))
        _, json_out, _ = await ffl(*status_args(temporal_service.address, handle, "--json"))
        await handle.terminate("test over")
    assert code == 3, err
    assert f"(no worker polling queue {served.handler_queue})" in out
    assert "◷ a  st.Slow  [waiting: scheduled" in out
    step = json.loads(json_out)["steps"][0]
    assert step["display"] == "waiting" and step["queue"] == served.handler_queue


async def test_picked_up_step_is_running_on_its_worker(temporal_client, temporal_service, tmp_path):
    async with Served(temporal_client, tmp_path) as served:
        handle = await served.start("st.Wait", {"x": 20})
        await wait_for_pending(handle, lambda p: p.last_worker_identity == HANDLER_IDENTITY)
        code, out, err = await ffl(*status_args(temporal_service.address, handle))
        await handle.terminate("test over")
    assert code == 3, err
    assert f"… a  st.Slow  [running: running on worker {HANDLER_IDENTITY}]" in out


async def test_retrying_step_shows_its_attempt_and_last_error(temporal_client, temporal_service, tmp_path):
    async with Served(temporal_client, tmp_path) as served:
        handle = await served.start("st.Retry", {"x": 1})
        await wait_for_pending(handle, lambda p: p.attempt == 2 and p.last_worker_identity == HANDLER_IDENTITY
                               and p.state == 2)  # STARTED
        code, out, err = await ffl(*status_args(temporal_service.address, handle, "--json"))
        await handle.terminate("test over")
    assert code == 3, err
    step = json.loads(out)["steps"][0]
    assert step["attempt"] == 2 and step["maximum_attempts"] == 3
    assert "attempt 2 of 3, last error: ValueError: flaky the first time" in step["detail"]


async def test_cancelled_and_terminated_runs_exit_2_with_cancelled_steps(temporal_client, temporal_service,
                                                                        tmp_path):
    async with Served(temporal_client, tmp_path, handlers=False) as served:
        cancelled = await served.start("st.Many", {"xs": [1, 1]})
        terminated = await served.start("st.Wait", {"x": 1})
        await wait_for_pending(cancelled, lambda p: p.activity_id == "b0/foreach[1]/s")
        await wait_for_pending(terminated, lambda p: p.activity_id == "b0/a")
        await cancelled.cancel()
        with contextlib.suppress(WorkflowFailureError):
            await cancelled.result()
        await terminated.terminate(reason="operator stopped it")
        code, out, err = await ffl(*status_args(temporal_service.address, cancelled))
        term_code, term_out, _ = await ffl(*status_args(temporal_service.address, terminated, "--json"))
    assert code == 2, err
    assert ": cancelled" in out.splitlines()[0]
    assert "CancelledError" not in out and "[failed" not in out
    assert out.count("[cancelled]") == 2
    status = json.loads(term_out)
    assert term_code == 2 and status["status"] == "terminated"
    assert status["failure"]["cause"] == "operator stopped it"
    assert status["steps"] is None or all(s["display"] == "cancelled" for s in status["steps"])


async def test_watch_refreshes_until_the_run_closes(temporal_client, temporal_service, tmp_path):
    async with Served(temporal_client, tmp_path) as served:
        handle = await served.start("st.Wait", {"x": 3})
        code, out, err = await ffl(*status_args(temporal_service.address, handle, "--watch", "--json",
                                                "--interval", "0.5"))
    assert code == 0, err
    states = [json.loads(line)["status"] for line in out.splitlines()]
    assert len(states) >= 2 and states[0] == "running" and states[-1] == "completed"


async def test_activities_carry_the_step_as_written_and_runs_their_program(temporal_client, tmp_path):
    """What the Web UI shows: activity summaries, the run's memo, search attributes and details."""
    from temporalio.common import SearchAttributeKey

    config = RuntimeConfig(search_attributes=True)  # the session server registers them (interpreter.local)
    async with Served(temporal_client, tmp_path, config=config) as served:
        handle = await served.start("st.Many", {"xs": [0, 7]})
        await handle.result()
        description = await handle.describe()
        history = await handle.fetch_history()
    converter = temporal_client.data_converter.payload_converter
    summaries = [converter.from_payload(event.user_metadata.summary, None) for event in history.events
                 if event.HasField("activity_task_scheduled_event_attributes") and event.HasField("user_metadata")]
    assert summaries == ["s = st.Slow(x = $.v) · Many › foreach[0] v=0 › s",  # which element each handles
                         "s = st.Slow(x = $.v) · Many › foreach[1] v=7 › s"]
    markers = [converter.from_payload(event.user_metadata.summary, None) for event in history.events
               if event.HasField("marker_recorded_event_attributes") and event.HasField("user_metadata")]
    assert markers == ["FFL machinery: pins the program of st.Many in this history"]  # a local activity since dev6
    memo = await description.memo()
    assert memo["ffl_workflow"] == "st.Many" and memo["ffl_namespace"] == "st"
    assert memo["ffl_sources"] == ["main.ffl"] and len(memo["ffl_program_hash"]) == 64
    attributes = description.typed_search_attributes
    assert attributes.get(SearchAttributeKey.for_keyword("FflWorkflow")) == "st.Many"
    assert attributes.get(SearchAttributeKey.for_keyword("FflProgramHash")) == memo["ffl_program_hash"]
    found = [w.id async for w in temporal_client.list_workflows(
        f'FflProgramHash = "{memo["ffl_program_hash"]}" and WorkflowId = "{handle.id}"')]
    assert found == [handle.id]
