"""The core conformance cases through separate ``worker.py`` processes and the real Temporal CLI.

This is the path a user without our ``ffl run`` takes: ``ffl publish``, one
interpreter worker, one handler worker per namespace queue, then
``temporal workflow execute --type NS.Workflow --task-queue ffl``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from tests import conformance_suite as suite

from .test_worker import REPO, WorkerProcess


def test_every_conformance_case_via_worker_processes_and_temporal_cli(temporal_service, tmp_path):
    registry = tmp_path / "registry"
    address = temporal_service.address
    interpreter_queue = "ffl-cli-" + uuid.uuid4().hex[:6]
    folders = suite.core_folders()
    workers: list[WorkerProcess] = []
    try:
        for folder in folders:
            published = subprocess.run(
                [sys.executable, "-m", "interpreter", "publish", *(str(folder / n) for n, _ in suite.sources(folder)),
                 "--registry", str(registry)],
                cwd=REPO, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert published.returncode == 0, published.stderr
            for queue in suite.handler_queues(folder):
                workers.append(WorkerProcess("--task-queue", queue, "--handlers", str(folder / "handlers.py"),
                                             "--address", address))  # fmt: skip
        workers.append(WorkerProcess("--task-queue", interpreter_queue, "--interpreter",
                                     "--registry", str(registry), "--address", address))  # fmt: skip
        for worker in workers:
            worker.wait_ready(timeout=60)

        temporal = str(Path(sys.executable).parent / "temporal")
        cases = suite.core_cases()
        for case in cases:
            run = subprocess.run(
                [temporal, "workflow", "execute", "--type", case.workflow, "--task-queue", interpreter_queue,
                 "--input", json.dumps(case.inputs), "--address", address,
                 "--workflow-id", f"cli-{case.id}-{uuid.uuid4().hex[:8]}", "-o", "json"],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            if case.succeeds:
                assert run.returncode == 0, f"{case.where}: {run.stdout}{run.stderr}"
                case.check(json.loads(run.stdout)["result"], None)
            else:
                assert run.returncode != 0, case.where
                case.check(None, run.stdout + run.stderr)
        assert len(cases) >= len(folders)
    finally:
        for worker in workers:
            worker.stop(signal.SIGKILL)
