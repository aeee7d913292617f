"""Every bad input an operator tried, against real worker processes: a clear error, and the next run still served.

Three ``worker.py`` processes share a registry: an interpreter without
scripts, an interpreter started with ``--allow-scripts`` (low script limits),
and a handler worker for ``bad_handlers.py``. Each case sends its input the
way any Temporal client can (raw JSON for what the Python client would not
even encode), asserts the failure's type and words, and then checks that the
same workers still complete a good run. ``ffl run`` refuses the same inputs
before it starts anything.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.common import RawValue

from interpreter.activities.program_store import LocalProgramStore
from interpreter.cli.run_view import local_activity_type
from interpreter.compiler import compile_files
from tests.runtime.harness import activity_records
from tests.runtime.test_worker import WorkerProcess

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PROGRAM = HERE / "bad_inputs.ffl"
GOOD = {"n": 42, "d": 1.5, "s": "x", "b": True, "items": [{"name": "a", "qty": 1}]}


class Workers:
    """The three worker processes and what they share."""

    def __init__(self, tmp: Path, address: str) -> None:
        self.marks = tmp / "marks"
        self.marks.mkdir()
        self.registry = tmp / "registry"
        LocalProgramStore(self.registry).publish(compile_files([str(PROGRAM)]))
        tag = uuid.uuid4().hex[:8]
        self.plain, self.scripted, self.handlers = f"ffl-plain-{tag}", f"ffl-scripts-{tag}", f"bad-{tag}"
        self.unserved = f"nobody-polls-{tag}"
        fast = {"maximum_attempts": 3, "initial_interval_seconds": 0.2, "backoff_coefficient": 1.0,
                "maximum_interval_seconds": 0.2}
        config = {
            "retry": {**fast, "start_to_close_seconds": 20},
            "facet_retry": {"bad.Hang": {**fast, "maximum_attempts": 4, "start_to_close_seconds": 1},
                            "bad.Nowhere": {**fast, "schedule_to_start_seconds": 2}},
            "queues": {"bad": self.handlers, "bad.Nowhere": self.unserved},
            "scripts": {"timeout_seconds": 3, "memory_mb": 256, "processes": 4},
        }  # fmt: skip
        self.config = tmp / "config.json"
        self.config.write_text(json.dumps(config))
        env = {"FFL_FAULT_MARKS": str(self.marks), "FFL_FAULT_SECRET": "top-secret", "FFL_REGISTRY": "",
               "TEMPORAL_ADDRESS": address}
        common = ["--registry", str(self.registry), "--config", str(self.config)]
        self.processes = {
            "plain": WorkerProcess("--task-queue", self.plain, "--interpreter", *common, env=env),
            "scripted": WorkerProcess("--task-queue", self.scripted, "--interpreter", "--allow-scripts", *common,
                                      env=env),
            "handlers": WorkerProcess("--task-queue", self.handlers, "--handlers", str(HERE / "bad_handlers.py"),
                                      *common, env=env),
        }  # fmt: skip
        for process in self.processes.values():
            process.wait_ready()

    def calls(self, name: str) -> int:
        path = self.marks / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    def stop(self) -> None:
        for process in self.processes.values():
            if process.proc.poll() is None:
                process.stop(signal.SIGKILL)


@pytest.fixture(scope="module")
def workers(tmp_path_factory, temporal_service):
    started = Workers(tmp_path_factory.mktemp("bad-input"), temporal_service.address)
    yield started
    started.stop()


def raw_json(text: str) -> RawValue:
    """An input as any client can send it, however bad: JSON text, not a Python value."""
    return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=text.encode()))


async def run(client, workflow: str, inputs, queue: str, timeout: float = 30) -> tuple[dict | None, object]:
    result, cause, _ = await run_handle(client, workflow, inputs, queue, timeout)
    return result, cause


async def run_handle(client, workflow: str, inputs, queue: str, timeout: float = 30):
    """(result, failure's cause, handle): the handle to read what the run's history holds."""
    handle = await client.start_workflow(workflow, inputs, id=f"bad-{uuid.uuid4().hex[:10]}", task_queue=queue)
    try:
        return await asyncio.wait_for(handle.result(), timeout), None, handle
    except WorkflowFailureError as err:
        return None, err.cause, handle


async def failed_at_once(handle) -> None:
    """The run failed in its first workflow task, which loaded its program (a local activity since 0.2.0.dev6):
    no activity task, timer or failed task, and one workflow task."""
    history = await handle.fetch_history()
    kinds = [e.event_type for e in history.events]
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in kinds
    assert kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) == 1
    local = [kind for kind in map(local_activity_type, history.events) if kind is not None]
    assert local == ["ffl.LoadProgram"]
    assert EventType.EVENT_TYPE_TIMER_STARTED not in kinds and EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds
    assert kinds[-1] == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED


async def still_serving(client, workers: Workers) -> None:
    result, _ = await run(client, "bad.Typed", GOOD, workers.plain)
    assert result == {"out": "x42"}
    result, _ = await run(client, "bad.Produced", {"mode": "ok"}, workers.scripted)
    assert result == {"n": 7}


def failed(cause, error_type: str, *words: str) -> None:
    assert cause is not None, "the run completed"
    message = getattr(cause, "message", str(cause))
    assert cause.type == error_type, f"{cause.type}: {message}"
    for word in words:
        assert word in message, message


INPUT_CASES = [
    ({**GOOD, "n": "not a number"}, "parameter 'n' expects Long, got string \"not a number\""),
    ({**GOOD, "n": 1.5}, "parameter 'n' expects Long, got double 1.5"),
    ({**GOOD, "d": True}, "parameter 'd' expects Double, got boolean true"),
    ({**GOOD, "b": "yes"}, "parameter 'b' expects Boolean, got string \"yes\""),
    ({**GOOD, "items": [{"name": "a", "qty": "many"}]}, "parameter 'items'[0].qty expects Long, got string"),
    ({**GOOD, "items": {"name": "a"}}, "parameter 'items' expects [bad.Item], got record"),
]


@pytest.mark.parametrize("inputs, message", INPUT_CASES)
async def test_inputs_of_the_wrong_type_fail_the_run_at_once(temporal_client, workers, inputs, message):
    _, cause, handle = await run_handle(temporal_client, "bad.Typed", inputs, workers.plain)
    failed(cause, "InvalidParameters", "workflow 'bad.Typed'", message)
    await failed_at_once(handle)
    await still_serving(temporal_client, workers)


@pytest.mark.parametrize("text, words", [
    ('{"n": ' + "[" * 1000 + "]" * 1000 + "}", ["nested more than 200 levels deep"]),
    ('{"n": NaN}', ["non-finite number"]),
    ('{"d": Infinity}', ["non-finite number"]),
    (json.dumps(GOOD)[:-1] + ', "d": 1e400}', ["parameter 'd' is a non-finite number (inf)"]),
    (json.dumps(GOOD)[:-1] + ', "j": {"x": [1e400]}}', ["parameter 'j' holds a non-finite number (inf) at $.x[0]"]),
    ('{"n": ' + "9" * 5000 + "}", ["more than 4300 digits"]),
    ('[1, 2]', ["one JSON object of parameters"]),
])  # fmt: skip
async def test_inputs_no_json_reader_can_take_fail_the_run_at_once(temporal_client, workers, text, words):
    _, cause = await run(temporal_client, "bad.Typed", raw_json(text), workers.plain)
    failed(cause, "InvalidParameters", *words)
    await still_serving(temporal_client, workers)


@pytest.mark.parametrize("mode, error_type, words", [
    ("nan", "ValueError", ["non-finite number"]),
    ("inf", "ValueError", ["non-finite number"]),
    ("deep", "ValueError", ["nested more than 200 levels deep"]),
    ("digits", "ValueError", ["cannot be encoded as JSON", "4300"]),
    ("object", "TypeError", ["has no JSON form"]),
    ("string", "TypeError", ["return 'n' expects Long, got string \"seven\""]),
])  # fmt: skip
async def test_handler_results_no_run_can_take_fail_the_step_without_retries(temporal_client, workers, mode,
                                                                              error_type, words):
    _, cause = await run(temporal_client, "bad.Produced", {"mode": mode}, workers.plain)
    failed(cause, error_type, "step 'b0/p' (bad.Produce) failed", *words)
    assert workers.calls(f"produce-{mode}") == 1  # retrying cannot help, so it did not happen
    result, _ = await run(temporal_client, "bad.CaughtProduce", {"mode": mode}, workers.plain)
    assert result == {"error_type": error_type}  # and catch sees it like any step failure
    await still_serving(temporal_client, workers)


@pytest.mark.parametrize("workflow, words", [
    ("bad.Divide", ["'/' overflowed: integer division result too large for a float"]),
    ("bad.Cube", ["'*' gives an integer of more than 4300 digits"]),
])
async def test_arithmetic_past_what_numbers_hold_fails_the_step(temporal_client, workers, workflow, words):
    big = 10**400 if workflow == "bad.Divide" else 10**2000
    _, cause = await run(temporal_client, workflow, {"a": big}, workers.plain)
    failed(cause, "EvaluationError", "step 'b0/h' (bad.Hold) failed", *words)
    result, _ = await run(temporal_client, "bad.CaughtDivide", {"a": 10**400}, workers.plain)
    assert result == {"error_type": "EvaluationError"}
    await still_serving(temporal_client, workers)


async def test_runaway_recursion_fails_at_the_nesting_limit(temporal_client, workers):
    result, _ = await run(temporal_client, "bad.Recurse", {"n": 5}, workers.plain)
    assert result == {"n": 0}
    _, cause, handle = await run_handle(temporal_client, "bad.Recurse", {"n": -1}, workers.plain)
    failed(cause, "NestingTooDeep", "nested more than 64 deep", "max_nesting_depth")
    await failed_at_once(handle)  # composed facets all the way down: no handler ran
    await still_serving(temporal_client, workers)


async def test_a_hanging_handler_fails_its_step_and_holds_at_most_two_threads(temporal_client, workers):
    _, cause, handle = await run_handle(temporal_client, "bad.Hung", {"n": 1}, workers.plain)
    failed(cause, "TimeoutError", "step 'b0/h' (bad.Hang) failed", "START_TO_CLOSE")
    [hang] = await activity_records(handle, "bad.Hang")  # 4 attempts of 1 s, not 4 x 300 s
    assert hang.scheduled.start_to_close_timeout.seconds == 1 and hang.scheduled.retry_policy.maximum_attempts == 4
    assert hang.started.attempt == 4 and hang.closed == "timed_out"
    assert workers.calls("hang") == 2  # attempt 2 got a fresh call; attempts 3 and 4 waited for it
    await still_serving(temporal_client, workers)


async def test_a_step_whose_queue_has_no_worker_fails_after_its_schedule_to_start_timeout(temporal_client, workers):
    _, cause = await run(temporal_client, "bad.Unserved", {"n": 1}, workers.plain)
    failed(cause, "TimeoutError", f"no worker picked the task up from queue '{workers.unserved}' within 2 s")
    await still_serving(temporal_client, workers)


async def test_scripts_need_a_worker_started_with_allow_scripts(temporal_client, workers):
    _, cause = await run(temporal_client, "bad.Environment", {}, workers.plain)
    failed(cause, "ScriptsDisabled", "start the interpreter worker with --allow-scripts")
    result, _ = await run(temporal_client, "bad.Environment", {}, workers.scripted)
    assert result["secret"] is None  # the worker's environment is not the script's
    assert Path(result["cwd"]).name.startswith("ffl-script-") and result["home"] == result["cwd"]
    assert not Path(result["cwd"]).exists()  # removed afterwards
    await still_serving(temporal_client, workers)


async def test_script_failures_timeouts_and_memory_are_step_failures(temporal_client, workers):
    _, cause, handle = await run_handle(temporal_client, "bad.Sleepy", {"seconds": 60}, workers.scripted)
    failed(cause, "ScriptTimeout", "ran longer than 3 s and was stopped")
    [script] = await activity_records(handle, "ffl.RunScript")  # stopped by its runner, once, long before 60 s
    assert script.closed == "failed" and script.started.attempt == 1
    assert script.closed_at - script.started_at < 30
    _, cause = await run(temporal_client, "bad.Hog", {}, workers.scripted)
    failed(cause, "MemoryError", "more than 256 MB")
    result, _ = await run(temporal_client, "bad.CaughtScript", {}, workers.scripted)
    assert result == {"error_type": "ZeroDivisionError"}
    await still_serving(temporal_client, workers)


async def test_sleeping_scripts_block_no_other_run(temporal_client, workers):
    sleepers = [asyncio.ensure_future(run_handle(temporal_client, "bad.Sleepy", {"seconds": 2.5}, workers.scripted))
                for _ in range(6)]  # more than the worker's 4 script processes
    await asyncio.sleep(0.5)
    result, _, handle = await run_handle(temporal_client, "bad.Produced", {"mode": "ok"}, workers.scripted)
    assert result == {"n": 7}
    done = await asyncio.gather(*sleepers)
    assert [r for r, _, _ in done] == [{"slept": 2.5}] * 6
    # it ended while every sleeper still slept (their order, as the server recorded it)
    ended = (await handle.describe()).close_time
    for _, _, sleeper in done:
        assert ended < (await sleeper.describe()).close_time


async def test_no_client_can_send_runscript_code(workers, temporal_service, tmp_path):
    """What the Temporal CLI lets anyone do: execute ffl.RunScript directly, with code of their own."""
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()"
    done = await asyncio.to_thread(subprocess.run, [
        str(Path(sys.executable).parent / "temporal"), "activity", "execute", "--type", "ffl.RunScript",
        "--task-queue", workers.scripted, "--activity-id", f"attack-{uuid.uuid4().hex[:8]}",
        "--start-to-close-timeout", "10s", "--input", json.dumps({"code": code, "params": {}}),
        "--address", temporal_service.address], capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode != 0
    assert "Status   FAILED" in done.stdout and "never code" in done.stdout  # failed at once: not retryable
    assert not marker.exists()


async def test_a_worker_running_scripts_stops_on_sigterm_within_seconds(temporal_client, workers):
    """Last of the worker tests: it stops the scripts worker."""
    handles = [await temporal_client.start_workflow("bad.Sleepy", {"seconds": 30}, id=f"sleep-{uuid.uuid4().hex}",
                                                    task_queue=workers.scripted) for _ in range(4)]
    await asyncio.sleep(2)  # the scripts are running
    process = workers.processes["scripted"]
    started = time.monotonic()
    assert await asyncio.to_thread(process.stop, signal.SIGTERM, 15) == 0
    assert time.monotonic() - started < 8
    for handle in handles:
        await handle.terminate("test over")


@pytest.mark.parametrize("inputs, words", [
    ('{"n": 1e400}', "number"),
    ('{"n": NaN}', "non-finite"),
    ("@deep", "nested more than 200 levels deep"),
])
def test_ffl_run_refuses_the_same_inputs_before_it_starts_anything(tmp_path, inputs, words):
    if inputs == "@deep":
        (tmp_path / "deep.json").write_text('{"n": ' + "[" * 1000 + "]" * 1000 + "}")
        inputs = f"@{tmp_path / 'deep.json'}"
    done = subprocess.run([sys.executable, "-m", "interpreter", "run", str(PROGRAM), "--workflow", "bad.Typed",
                           "--input", inputs], cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert "error: bad --input:" in done.stderr and words in done.stderr and "Traceback" not in done.stderr
