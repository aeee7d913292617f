"""The workflow's trust boundary, tried as an adversary would: a plain Temporal client, real worker processes.

Two ``worker.py`` processes (an interpreter and a handler worker for
``trust_handlers.py``) share the value store of the test client. Whatever a
start request carries — a reference the project never wrote, a value altered
in the store, an unknown encoding, a forged continuation — the run closes as
failed with an error naming the cause, instead of retrying its workflow task
forever; a forged continuation never records a step done without its handler.
"""

from __future__ import annotations

import asyncio
import json
import signal
import uuid
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowFailureError
from temporalio.common import RawValue

from interpreter.activities.program_store import LocalProgramStore
from interpreter.activities.value_codec import REFERENCE_ENCODING, value_converter
from interpreter.activities.value_store import DirectoryValueStore, digest_of
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.compiler import compile_files
from interpreter.local import restart, start_mongo
from tests.runtime.test_worker import WorkerProcess

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
RESULT_TIMEOUT = 60
"""Generous: a run refused at its boundary closes within moments; one stuck in task retries never does."""


class Workers:
    """An interpreter and a handler worker process, sharing a registry, marks and the client's value store."""

    def __init__(self, tmp: Path, address: str, values: Path | None, *more: str, **settings: object) -> None:
        self.marks = tmp / "marks"
        self.marks.mkdir()
        registry = tmp / "registry"
        LocalProgramStore(registry).publish(compile_files([str(HERE / "trust.ffl")]))
        tag = uuid.uuid4().hex[:8]
        self.queue, self.handlers = f"ffl-trust-{tag}", f"trust-{tag}"
        fast = {"maximum_attempts": 3, "initial_interval_seconds": 0.2, "backoff_coefficient": 1.0,
                "maximum_interval_seconds": 0.2, "start_to_close_seconds": 120}
        config = {"retry": fast, "queues": {"trust": self.handlers}, "child_threshold": 2, "iterations_per_child": 2,
                  "children_in_flight": 2, **settings}  # fmt: skip
        (tmp / "config.json").write_text(json.dumps(config))
        env = {"FFL_FAULT_MARKS": str(self.marks), "FFL_REGISTRY": "", "TEMPORAL_ADDRESS": address,
               "FFL_VALUE_STORE": str(values or "")}  # without a directory, values go to GridFS of --mongo
        common = ["--registry", str(registry), "--config", str(tmp / "config.json"), *more]
        self.processes = [
            WorkerProcess("--task-queue", self.queue, "--interpreter", *common, env=env),
            WorkerProcess("--task-queue", self.handlers, "--handlers", str(HERE / "trust_handlers.py"), *common,
                          env=env),
        ]  # fmt: skip
        for process in self.processes:
            process.wait_ready()

    def calls(self, name: str) -> int:
        path = self.marks / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    def stop(self) -> None:
        for process in self.processes:
            if process.proc.poll() is None:
                process.stop(signal.SIGKILL)


@pytest.fixture(scope="module")
def workers(tmp_path_factory, temporal_service, value_store):
    started = Workers(tmp_path_factory.mktemp("trust"), temporal_service.address, value_store.root)
    yield started
    started.stop()


def raw(encoding: bytes, data: bytes) -> RawValue:
    return RawValue(Payload(metadata={"encoding": encoding}, data=data))


def reference(body: object) -> RawValue:
    """An ``ffl/reference`` payload as any client can write one."""
    return raw(REFERENCE_ENCODING, json.dumps(body).encode())


def stored_reference(store: DirectoryValueStore, value: object) -> tuple[RawValue, Path]:
    """A value put in the store the way the codec puts it; its reference and its file."""
    data = Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(value).encode()).SerializeToString()
    digest = digest_of(data)
    store.put(digest, data)
    return reference({"sha256": digest, "size": len(data), "encoding": "json/plain"}), store.root / digest[:2] / digest


async def outcome(client, workflow: str, args: list, queue: str, workflow_id: str | None = None,
                  memo: dict | None = None):
    """(result, None, handle) or (None, the failure's cause, handle): the run closed either way."""
    handle = await client.start_workflow(workflow, args=args, id=workflow_id or f"trust-{uuid.uuid4().hex[:10]}",
                                         task_queue=queue, memo=memo)
    try:
        return await asyncio.wait_for(handle.result(), RESULT_TIMEOUT), None, handle
    except WorkflowFailureError as err:
        return None, err.cause, handle


def failed(cause, error_type: str, *words: str) -> None:
    assert cause is not None, "the run completed"
    message = getattr(cause, "message", str(cause))
    assert getattr(cause, "type", None) == error_type, f"{getattr(cause, 'type', None)}: {message}"
    for word in words:
        assert word in message, message


@pytest.mark.parametrize("body, error_type, words", [
    ({"sha256": "../../../../etc/passwd", "size": 10}, "InvalidReference", ["'../../../../etc/passwd'", "sha256"]),
    ({"sha256": ["a", "b"], "size": 10}, "InvalidReference", ["not a sha256 digest"]),
    (["not", "an", "object"], "InvalidReference", ["JSON object"]),
    ({"sha256": "0" * 64, "size": 10}, "ValueMissing", ["0" * 64, "not in the value store"]),
    ({"sha256": "1" * 64, "size": 70 * 1024 * 1024}, "ValueTooLarge", ["73400320 bytes", "at most"]),
])  # fmt: skip
async def test_a_reference_the_project_did_not_write_fails_the_run(temporal_client, workers, body, error_type, words):
    _, cause, _ = await outcome(temporal_client, "trust.W", [reference(body)], workers.queue)
    failed(cause, error_type, *words)
    assert workers.calls("value") == 0


async def test_a_value_altered_in_the_store_fails_the_run_and_the_next_write_repairs_it(temporal_client, workers,
                                                                                        value_store):
    text = "x" * (200 * 1024) + uuid.uuid4().hex  # over the codec's threshold: the client stores it
    ref, path = stored_reference(value_store, {"text": text})
    path.write_bytes(path.read_bytes()[:-1] + b"!")
    _, cause, _ = await outcome(temporal_client, "trust.Text", [ref], workers.queue)
    failed(cause, "ValueDamaged", "has been altered")
    # The test client's codec writes the same value again: it finds the damaged copy and replaces it.
    result, cause, _ = await outcome(temporal_client, "trust.Text", [{"text": text}], workers.queue)
    assert cause is None and result == {"n": 1}


async def test_a_large_input_the_client_stored_is_taken(temporal_client, workers):
    result, cause, _ = await outcome(temporal_client, "trust.Text", [{"text": "y" * (300 * 1024)}], workers.queue)
    assert cause is None and result == {"n": 1}


async def test_an_input_of_an_unknown_encoding_fails_the_run(temporal_client, workers):
    _, cause, _ = await outcome(temporal_client, "trust.W", [raw(b"foo/bar", b"{}")], workers.queue)
    failed(cause, "InvalidParameters", "Unknown payload encoding foo/bar")


FORGED = {"memo": {"b0/s": {"r": {"v": 424242}}}, "seq": 0, "run_id": "forged", "program_hash": "",
          "config": {"queues": {"trust": "attacker-queue"}}}


@pytest.mark.parametrize("second, words", [
    (FORGED, ["a workflow takes one input", "not continued"]),
    ("not a continuation", ["a workflow takes one input", "not continued"]),
    ({**FORGED, "memo": "malformed"}, ["a workflow takes one input", "not continued"]),
])  # fmt: skip
async def test_a_forged_continuation_is_refused_and_records_no_step(temporal_client, workers, second, words):
    before = workers.calls("value")
    _, cause, handle = await outcome(temporal_client, "trust.W", [{"v": 1}, second], workers.queue)
    failed(cause, "InvalidParameters", *words)
    assert workers.calls("value") == before  # no handler ran ...
    assert await handle.query("steps") == []  # ... and no step was recorded, done or otherwise


async def test_a_child_started_by_a_client_is_refused(temporal_client, workers):
    request = {"workflow": "trust.W", "program_hash": "", "config": {}, "root_id": "x", "root_run": "y",
               "block": "", "path": "b0", "owner": None, "script_target": "", "depth": 0, "params": {},
               "outer": [{"name": "s", "returns": {"v": 424242}}], "items": [1], "first": 0}  # fmt: skip
    _, cause, _ = await outcome(temporal_client, "ffl.Iterations", [request], workers.queue)
    failed(cause, "UntrustedChild", "cannot be started on its own")


async def test_terminate_and_start_again_under_the_same_id_with_children(temporal_client, workers):
    """The terminated run's children are still closing when the new run starts its own: their ids differ."""
    workflow_id = f"trust-again-{uuid.uuid4().hex[:8]}"
    first = await temporal_client.start_workflow("trust.Fan", {"items": [1, 2, 3, 4], "s": 30.0}, id=workflow_id,
                                                 task_queue=workers.queue)
    while not workers.calls("wait-1"):  # its children are running handlers
        await asyncio.sleep(0.1)
    await first.terminate("test: start again")
    result, cause, _ = await outcome(temporal_client, "trust.Fan", [{"items": [5, 6, 7, 8], "s": 0.0}],
                                     workers.queue, workflow_id=workflow_id)
    assert cause is None, cause
    assert result == {"out": [5, 6, 7, 8]}



async def test_a_mongodb_outage_delays_values_in_gridfs_and_runs_each_handler_once(tmp_path, temporal_service):
    """MongoDB killed while step 3 of a chain passing a 200 KB value runs, restarted later: the run finishes.

    The kill comes while the handler still runs, so its result is stored during the outage (a kill during a
    write secantusdb already acknowledged may lose it, which no retry can bring back)."""
    mongo = start_mongo(sync_on_commit=True)  # its own: this test kills it
    uri = mongo.extra["uri"]
    workers = Workers(tmp_path, temporal_service.address, None, "--mongo", uri)
    try:
        client = await connect(ConnectOptions(address=temporal_service.address), data_converter=value_converter(
            mongo_uri=uri))
        text = "z" * (200 * 1024)
        handle = await client.start_workflow("trust.Chain", {"text": text}, id=f"trust-mongo-{uuid.uuid4().hex[:8]}",
                                             task_queue=workers.queue)
        while not workers.calls("grow-3"):
            await asyncio.sleep(0.05)
        mongo.process.kill()
        mongo.process.wait()
        await asyncio.sleep(15)  # the outage: steps wait for the store, none fails
        mongo = restart(mongo)
        result = await asyncio.wait_for(handle.result(), 180)
        assert result == {"text": text + "123456"}
        assert [workers.calls(f"grow-{i}") for i in range(1, 7)] == [1] * 6  # no handler ran twice
    finally:
        workers.stop()
        mongo.stop()


@pytest.mark.parametrize("memo, error_type, words", [
    ({"ffl_program_hash": raw(b"foo/bar", b"{}")}, "InvalidParameters", ["memo 'ffl_program_hash'"]),
    ({"ffl_program_hash": ["not", "a", "hash"]}, "InvalidParameters", ["memo 'ffl_program_hash'", "program hash"]),
])  # fmt: skip
async def test_a_memo_pinning_no_program_fails_the_run(temporal_client, workers, memo, error_type, words):
    _, cause, _ = await outcome(temporal_client, "trust.W", [{"v": 1}], workers.queue, memo=memo)
    failed(cause, error_type, *words)



async def test_a_memo_the_run_describes_itself_in_is_overwritten_whatever_it_held(temporal_client, workers):
    result, cause, _ = await outcome(temporal_client, "trust.W", [{"v": 1}], workers.queue,
                                     memo={"ffl_workflow": raw(b"foo/bar", b"{}")})
    assert cause is None and result == {"v": 1}


async def test_a_signal_of_an_unknown_encoding_is_refused_and_the_run_goes_on(temporal_client, workers):
    handle = await temporal_client.start_workflow("trust.Waits", id=f"trust-{uuid.uuid4().hex[:10]}",
                                                  task_queue=workers.queue)
    await handle.signal("go", raw(b"foo/bar", b"{}"))
    await handle.signal("go", {"ok": True})
    assert await asyncio.wait_for(handle.result(), RESULT_TIMEOUT) == {"got": {"ok": True}}


async def test_a_real_continue_as_new_is_still_honoured(tmp_path, temporal_client, temporal_service, value_store):
    """The run continues as new several times on real workers; each continuation is accepted, no step runs twice."""
    workers = Workers(tmp_path, temporal_service.address, value_store.root, continue_after_events=100)
    try:
        result, cause, handle = await outcome(temporal_client, "trust.Long", [{"v": 7}], workers.queue)
        assert cause is None and result == {"v": 7}
        first = await temporal_client.get_workflow_handle(handle.id, run_id=handle.result_run_id).fetch_history()
        assert first.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        assert workers.calls("value") == 24  # the memo carried every completed step: none ran again
    finally:
        workers.stop()
