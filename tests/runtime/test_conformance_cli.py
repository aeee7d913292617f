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

from tests.paths import core_case_folders

from .test_conformance_run import present
from .test_worker import REPO, WorkerProcess


def _folders() -> list[Path]:
    return core_case_folders()


def _queues(folder: Path) -> list[str]:
    """The namespace queues a case's handlers serve (first segment of each registered facet)."""
    text = (folder / "handlers.py").read_text()
    return sorted({line.split('"')[1].split(".")[0] for line in text.splitlines() if "registry.register(" in line})


def test_every_conformance_case_via_worker_processes_and_temporal_cli(temporal_service, tmp_path):
    registry = tmp_path / "registry"
    address = temporal_service.address
    interpreter_queue = "ffl-cli-" + uuid.uuid4().hex[:6]
    workers: list[WorkerProcess] = []
    try:
        for folder in _folders():
            published = subprocess.run(
                [sys.executable, "-m", "interpreter", "publish", *map(str, sorted(folder.glob("*.ffl"))),
                 "--registry", str(registry)],
                cwd=REPO, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert published.returncode == 0, published.stderr
            for queue in _queues(folder):
                workers.append(WorkerProcess("--task-queue", queue, "--handlers", str(folder / "handlers.py"),
                                             "--address", address))  # fmt: skip
        workers.append(WorkerProcess("--task-queue", interpreter_queue, "--interpreter",
                                     "--registry", str(registry), "--address", address))  # fmt: skip
        for worker in workers:
            worker.wait_ready(timeout=60)

        temporal = str(Path(sys.executable).parent / "temporal")
        ran = 0
        for folder in _folders():
            for case in json.loads((folder / "cases.json").read_text()):
                run = subprocess.run(
                    [temporal, "workflow", "execute", "--type", case["workflow"], "--task-queue", interpreter_queue,
                     "--input", json.dumps(case.get("inputs", {})), "--address", address,
                     "--workflow-id", f"cli-{folder.name}-{uuid.uuid4().hex[:8]}", "-o", "json"],
                    capture_output=True, text=True, timeout=60,
                )  # fmt: skip
                where = f"{folder.name} {case['workflow']} {case.get('inputs')}"
                expect = case["expect"]
                if "outputs" in expect:
                    assert run.returncode == 0, f"{where}: {run.stdout}{run.stderr}"
                    assert present(json.loads(run.stdout)["result"]) == present(expect["outputs"]), where
                else:
                    assert run.returncode != 0, where
                    for text in expect["error_contains"]:
                        assert text in run.stdout + run.stderr, where
                ran += 1
        assert ran == sum(len(json.loads((f / "cases.json").read_text())) for f in _folders())
    finally:
        for worker in workers:
            worker.stop(signal.SIGKILL)
