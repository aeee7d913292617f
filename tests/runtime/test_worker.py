"""worker.py as a real process: serves a handler queue, stops cleanly on SIGTERM; connection options."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
from temporalio.service import TLSConfig
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from interpreter.cli.connect import ConnectOptions, add_connection_args, options_from_args, tls_config
from tests import conformance_suite as suite

from .call_handler import CallHandler

REPO = Path(__file__).resolve().parents[2]


class WorkerProcess:
    """``python worker.py ...`` with its stderr collected; ``ready`` once it logged what it serves."""

    def __init__(self, *args: str, env: dict | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(REPO / "worker.py"), *args],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
        self.lines: list[str] = []
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith("ffl worker: queue"):
                self.ready.set()

    def wait_ready(self, timeout: float = 30) -> str:
        if not self.ready.wait(timeout):
            self.stop()
            raise AssertionError("worker did not start:\n" + "".join(self.lines))
        return next(line for line in self.lines if line.startswith("ffl worker: queue"))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


def _write_handlers(folder: Path, queue: str) -> Path:
    path = folder / "slow_handlers.py"
    path.write_text(
        "import time\n"
        "from interpreter.activities.handlers import handler\n\n"
        f"@handler('{queue}.Echo')\n"
        "def echo(p):\n"
        "    open(p['marker'], 'w').close()\n"
        "    time.sleep(p.get('sleep', 0))\n"
        "    return {'echo': dict(p), 'pid': __import__('os').getpid()}\n"
    )
    return path


async def test_handler_worker_process_serves_queue_and_exits_0_on_sigterm(
    temporal_client, temporal_service, task_queue, tmp_path
):
    handlers = _write_handlers(tmp_path, task_queue)
    marker = tmp_path / "started"
    proc = WorkerProcess("--task-queue", task_queue, "--handlers", str(handlers),
                         env={"TEMPORAL_ADDRESS": temporal_service.address})  # fmt: skip
    try:
        banner = proc.wait_ready()
        assert f"queue {task_queue}" in banner and f"{task_queue}.Echo" in banner
        wf_queue = task_queue + "-wf"
        async with Worker(temporal_client, task_queue=wf_queue, workflows=[CallHandler],
                          workflow_runner=UnsandboxedWorkflowRunner()):  # fmt: skip
            handle = await temporal_client.start_workflow(
                "test.CallHandler",
                {"facet": f"{task_queue}.Echo", "payload": {"x": 1, "sleep": 1.5, "marker": str(marker)}, "queue": task_queue},
                id=f"test-{uuid.uuid4().hex[:8]}", task_queue=wf_queue,
            )  # fmt: skip
            # SIGTERM while the handler runs: the worker lets it finish, then exits 0.
            for _ in range(200):
                if marker.exists():
                    break
                await asyncio.sleep(0.05)
            assert marker.exists(), "".join(proc.lines)
            assert await asyncio.to_thread(proc.stop) == 0
            result = await handle.result()
        assert result["echo"] == {"x": 1, "sleep": 1.5, "marker": str(marker)}
        assert result["pid"] == proc.proc.pid
        assert any("shutting down" in line for line in proc.lines)
    finally:
        proc.stop(signal.SIGKILL)


def test_worker_rejects_bad_handler_spec(tmp_path):
    proc = WorkerProcess("--task-queue", "x", "--handlers", str(tmp_path / "nope.py"))
    assert proc.proc.wait(30) == 2
    assert "not found" in "".join(proc.lines)
    # ``ffl worker`` is the same command.
    same = subprocess.run([sys.executable, "-m", "interpreter", "worker", "--task-queue", "x", "--handlers",
                           str(tmp_path / "nope.py")], cwd=REPO, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert same.returncode == 2 and "not found" in same.stderr


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_connection_args(parser)
    return parser.parse_args(argv)


def test_connection_options_flags_over_env(tmp_path):
    env = {"TEMPORAL_ADDRESS": "env:7233", "TEMPORAL_NAMESPACE": "env-ns", "TEMPORAL_API_KEY": "k"}
    opts = options_from_args(_parse(["--namespace", "flag-ns"]), env)
    assert (opts.address, opts.namespace, opts.api_key) == ("env:7233", "flag-ns", "k")
    assert tls_config(opts) is True  # an API key implies TLS
    assert tls_config(options_from_args(_parse([]), {})) is False
    cert, key, ca = (tmp_path / n for n in ("c.pem", "k.pem", "ca.pem"))
    for p in (cert, key, ca):
        p.write_bytes(p.name.encode())
    tls = tls_config(ConnectOptions(tls_cert=str(cert), tls_key=str(key), tls_ca=str(ca)))
    assert isinstance(tls, TLSConfig)
    assert (tls.client_cert, tls.client_private_key, tls.server_root_ca_cert) == (b"c.pem", b"k.pem", b"ca.pem")
    with pytest.raises(ValueError, match="both"):
        tls_config(ConnectOptions(tls_cert=str(cert)))


def test_separate_worker_processes_with_temporal_cli(temporal_service, tmp_path):
    """ffl publish, then worker.py for ffl and for calc, then the real Temporal CLI starts the workflow."""
    case = suite.folder("dataflow")
    registry = tmp_path / "registry"
    ffl = [sys.executable, "-m", "interpreter"]
    published = subprocess.run([*ffl, "publish", str(case / "program.ffl"), "--registry", str(registry)],
                               cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert published.returncode == 0, published.stderr
    address = temporal_service.address
    interp = WorkerProcess("--task-queue", "ffl", "--registry", str(registry), "--address", address)
    handlers = WorkerProcess("--task-queue", "calc", "--handlers", str(case / "handlers.py"), "--address", address)
    try:
        assert "interpreter workflow" in interp.wait_ready()
        assert "calc.Add, calc.Label, calc.Mul" in handlers.wait_ready()
        workflow_id = f"cli-{uuid.uuid4().hex[:8]}"
        temporal = str(Path(sys.executable).parent / "temporal")
        run = subprocess.run(
            [temporal, "workflow", "execute", "--type", "calc.Diamond", "--task-queue", "ffl",
             "--input", '{"a": 5}', "--address", address, "--workflow-id", workflow_id, "-o", "json"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert run.returncode == 0, run.stdout + run.stderr
        assert json.loads(run.stdout)["result"] == {"total": 145, "squared": 256, "text": "[total=145]", "check": True}
        run_id = json.loads(run.stdout)["runId"]  # ffl status takes a run id as well as a workflow id
        status = subprocess.run([*ffl, "status", run_id, "--address", address],
                                cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert status.returncode == 0, status.stderr
        assert f"{workflow_id} run {run_id}: completed" in status.stdout and "steps: 7 done, 0 running, 0 failed" in status.stdout
        assert '-> {"sum":145}' in status.stdout
        # ffl run on the shared server, with no handlers of its own, leaves calc to the calc worker process.
        own = subprocess.run([*ffl, "run", str(case / "program.ffl"), "--workflow", "calc.Diamond", "--input",
                              '{"a": 1, "b": 2}', "--address", address, "--task-queue", "ffl-own"],
                             cwd=REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert own.returncode == 0, own.stderr
        assert json.loads(own.stdout)["total"] == 109
        assert "wait for workers serving their queues" in own.stderr
        assert interp.stop() == 0 and handlers.stop() == 0
    finally:
        interp.stop(signal.SIGKILL)
        handlers.stop(signal.SIGKILL)


LOGGED = """
namespace logged {
    event facet Boom(x: Long) => (y: Long)
    workflow Run(x: Long) => (y: Long) andThen {
        b = Boom(x = $.x)
        yield Run(y = b.y)
    }
}
"""

STAMP = r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "


async def test_worker_logs_have_timestamps_one_line_per_failed_attempt_and_runs_at_info(
    temporal_client, temporal_service, task_queue, tmp_path
):
    import re

    from temporalio.client import WorkflowFailureError

    (tmp_path / "logged.ffl").write_text(LOGGED)
    (tmp_path / "boom.py").write_text("from interpreter.activities.handlers import handler\n\n"
                                      "@handler('logged.Boom')\ndef boom(p):\n    raise ValueError(f'no {p[\"x\"]}')\n")
    (tmp_path / "cfg.json").write_text(json.dumps({"queues": {"logged": task_queue + "-h"},
                                                   "retry": {"maximum_attempts": 2, "initial_interval_seconds": 0.1}}))
    published = subprocess.run([sys.executable, "-m", "interpreter", "publish", str(tmp_path / "logged.ffl"),
                                "--registry", str(tmp_path / "reg")], cwd=REPO, capture_output=True, text=True)
    assert published.returncode == 0, published.stderr
    env = {"TEMPORAL_ADDRESS": temporal_service.address, "FFL_LOG_LEVEL": "INFO"}
    interpreter = WorkerProcess("--task-queue", task_queue, "--interpreter", "--registry", str(tmp_path / "reg"),
                                "--config", str(tmp_path / "cfg.json"), env=env)
    handlers = WorkerProcess("--task-queue", task_queue + "-h", "--handlers", str(tmp_path / "boom.py"),
                             "--config", str(tmp_path / "cfg.json"), env=env)
    try:
        interpreter.wait_ready()
        handlers.wait_ready()
        handle = await temporal_client.start_workflow("logged.Run", {"x": 7}, id=f"logged-{uuid.uuid4().hex[:8]}",
                                                      task_queue=task_queue)
        with pytest.raises(WorkflowFailureError):
            await handle.result()
        description = await handle.describe()
    finally:
        interpreter.stop()
        handlers.stop()
    logged = [line for line in handlers.lines if not line.startswith("ffl worker:")]
    warnings = [line for line in logged if " WARNING " in line]
    assert len(warnings) == 2 and all(re.match(STAMP, line) for line in warnings), "".join(handlers.lines)
    assert "attempt 1 of logged.Boom failed (step b0/b of run " in warnings[0] and "ValueError: no 7" in warnings[0]
    assert "attempt 2 of logged.Boom failed" in warnings[1]
    assert not any("Traceback" in line for line in handlers.lines)
    runs = [line for line in interpreter.lines if "ffl.runs" in line]
    assert len(runs) == 2 and all(re.match(STAMP + "INFO ffl.runs: ", line) for line in runs), interpreter.lines
    assert runs[0].split(": ", 1)[1].startswith(f"run started: logged.Run {handle.id} ")
    assert "run failed: logged.Run" in runs[1] and "no 7" in runs[1]
    assert description.status is not None
