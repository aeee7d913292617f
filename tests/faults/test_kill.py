"""kill -9 in the middle of a run: of the interpreter worker, of a handler worker, of the dev server itself.

Every process is real (``worker.py``, ``temporal server start-dev``). Each run
ends with exactly the result an undisturbed run gives, and the handler calls
(counted by marks the handlers write) are never duplicated beyond the
attempt that was killed.
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
import uuid
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import TimeoutType
from temporalio.client import Client
from temporalio.converter import DataConverter

from interpreter.activities.program_store import LocalProgramStore
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.compiler import compile_files
from interpreter.local import restart, start_temporal
from tests.runtime.harness import activity_records
from tests.runtime.test_worker import WorkerProcess

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
EXPECTED = {"n": 8312, "fanned": [103, 106, 109, 112, 115, 118, 121, 124, 127, 130]}
STEPS = [f"step-{i}" for i in (1, 2, 3, 4, 5, 6, *range(101, 111))]


class Setup:
    """Registry, configuration and marks of one test; worker processes on demand."""

    def __init__(self, tmp: Path, address: str, **env: str) -> None:
        self.tmp, self.address = tmp, address
        self.marks = tmp / "marks"
        self.marks.mkdir()
        self.registry = tmp / "registry"
        LocalProgramStore(self.registry).publish(compile_files([str(HERE / "chain.ffl")]))
        tag = uuid.uuid4().hex[:8]
        self.queue, self.handler_queue = f"ffl-{tag}", f"chain-{tag}"
        fast = {"maximum_attempts": 3, "initial_interval_seconds": 0.2, "backoff_coefficient": 1.0,
                "maximum_interval_seconds": 0.2}
        config = {"retry": {**fast, "start_to_close_seconds": 60},
                  "facet_retry": {"chain.Slow": {**fast, "start_to_close_seconds": 120, "heartbeat_seconds": 2}},
                  "queues": {"chain": self.handler_queue}}  # fmt: skip
        (tmp / "config.json").write_text(json.dumps(config))
        self.env = {"FFL_FAULT_MARKS": str(self.marks), "FFL_REGISTRY": "", "TEMPORAL_ADDRESS": address, **env}
        self.processes: list[WorkerProcess] = []

    def start(self, kind: str, **env: str) -> WorkerProcess:
        common = ["--registry", str(self.registry), "--config", str(self.tmp / "config.json")]
        if kind == "interpreter":
            args = ["--task-queue", self.queue, "--interpreter", *common]
        else:
            args = ["--task-queue", self.handler_queue, "--handlers", str(HERE / "chain_handlers.py"), *common]
        process = WorkerProcess(*args, env={**self.env, **env})
        self.processes.append(process)
        process.wait_ready()
        return process

    def calls(self, name: str) -> int:
        path = self.marks / name
        return len(path.read_text().splitlines()) if path.exists() else 0

    async def wait_for(self, *names: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not all(self.calls(n) for n in names):
            assert time.monotonic() < deadline, f"timed out waiting for {names}"
            await asyncio.sleep(0.05)

    def stop_all(self) -> None:
        for process in self.processes:
            if process.proc.poll() is None:
                process.stop(signal.SIGKILL)


def kill(process: WorkerProcess) -> None:
    process.proc.send_signal(signal.SIGKILL)
    assert process.proc.wait(10) == -signal.SIGKILL


async def test_killed_interpreter_worker_the_run_goes_on_without_duplicates(temporal_client, temporal_service,
                                                                            tmp_path):
    setup = Setup(tmp_path, temporal_service.address, FFL_FAULT_STEP_SECONDS="0.3")
    try:
        first = setup.start("interpreter")
        setup.start("handlers")
        handle = await temporal_client.start_workflow("chain.Run", {"n": 3}, id=f"kill-i-{uuid.uuid4().hex[:8]}",
                                                      task_queue=setup.queue)  # fmt: skip
        await setup.wait_for("step-2")
        kill(first)
        killed_at = time.monotonic()
        setup.start("interpreter")  # replays the history and goes on
        assert await asyncio.wait_for(handle.result(), 60) == EXPECTED
        print(f"\ninterpreter worker killed: run finished {time.monotonic() - killed_at:.1f} s later")
    finally:
        setup.stop_all()
    assert [setup.calls(name) for name in STEPS] == [1] * len(STEPS)  # handlers were never disturbed
    assert setup.calls("slow-attempt-1") == 1 and setup.calls("slow-attempt-2") == 0


@pytest.mark.parametrize("silent", [False, True], ids=["handler-heartbeats", "worker-heartbeats-for-it"])
async def test_killed_handler_worker_is_noticed_within_the_heartbeat_timeout(temporal_client, temporal_service,
                                                                             tmp_path, silent):
    """Whether the handler heartbeats or its worker does for it, a dead worker's step is retried within 2 s."""
    setup = Setup(tmp_path, temporal_service.address, FFL_FAULT_SLOW_FIRST="60",
                  **({"FFL_FAULT_SLOW_SILENT": "1"} if silent else {}))
    try:
        setup.start("interpreter")
        doomed = setup.start("handlers")
        handle = await temporal_client.start_workflow("chain.Run", {"n": 3}, id=f"kill-h-{uuid.uuid4().hex[:8]}",
                                                      task_queue=setup.queue)  # fmt: skip
        await setup.wait_for("slow-attempt-1", *[f"step-{i}" for i in range(101, 111)])
        kill(doomed)  # in the middle of chain.Slow's first attempt
        killed_at = time.monotonic()
        setup.start("handlers")
        assert await asyncio.wait_for(handle.result(), 60) == EXPECTED
        recovered = time.monotonic() - killed_at
        print(f"\nhandler worker killed mid-activity: run finished {recovered:.1f} s later")
    finally:
        setup.stop_all()
    # the 2 s heartbeat timeout, not the 120 s start-to-close timeout, decided when attempt 2 started
    [slow] = await activity_records(handle, "chain.Slow")
    assert slow.started.attempt == 2 and slow.closed == "completed"
    assert slow.started.last_failure.timeout_failure_info.timeout_type == TimeoutType.TIMEOUT_TYPE_HEARTBEAT
    assert setup.calls("slow-attempt-1") == 1 and setup.calls("slow-attempt-2") == 1
    assert [setup.calls(name) for name in STEPS] == [1] * len(STEPS)


async def test_killed_dev_server_restarted_on_its_file_finishes_the_run(tmp_path):
    server = start_temporal(ui=False, db_file=str(tmp_path / "temporal.db"), log_dir=str(tmp_path))
    setup = Setup(tmp_path, server.address, FFL_FAULT_STEP_SECONDS="0.5")
    try:
        client = await _connect(server.address)
        setup.start("interpreter")
        setup.start("handlers")
        handle = await client.start_workflow("chain.Run", {"n": 3}, id=f"kill-s-{uuid.uuid4().hex[:8]}",
                                             task_queue=setup.queue)  # fmt: skip
        await setup.wait_for("step-2")
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(10)
        killed_at = time.monotonic()
        await asyncio.sleep(3)  # an outage, with the workers still running
        server = await asyncio.to_thread(restart, server)
        client = await _connect(server.address)
        result = await asyncio.wait_for(client.get_workflow_handle(handle.id).result(), 120)
        print(f"\ndev server killed, restarted on its file: run finished {time.monotonic() - killed_at:.1f} s later")
    finally:
        setup.stop_all()
        server.stop()
    assert result == EXPECTED
    calls = [setup.calls(name) for name in STEPS]
    # each step ran once, except at most the one in flight when the server died (its completion was lost)
    assert all(count >= 1 for count in calls) and sum(calls) <= len(STEPS) + 1, calls


async def _connect(address: str) -> Client:
    return await connect(ConnectOptions(address=address), retry_for=60.0, data_converter=DataConverter.default)
