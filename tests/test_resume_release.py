"""A run started by the previous release is resumed by this one: ``ffl resume`` on the real dev server.

The previous release is the code of the commit that recorded its histories (tests/replay/histories/<newest>),
taken out with ``git archive``. Its worker (a process of its own, its own ``ffl worker``) runs a foreach of 300
in child workflows that fails at item 200; this release's worker and ``ffl resume`` then finish it, and the
handler call log shows each item done once: the failed one and those that never ran, none of the others.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tarfile
import uuid
from io import BytesIO
from pathlib import Path

from packaging.version import Version
from temporalio.client import WorkflowFailureError

from .paths import REPO
from .test_resume import PIPELINE

HANDLERS = '''
import os

LOG = os.environ["RESUME_CALL_LOG"]
BROKEN = os.environ["RESUME_BROKEN"]


def work(payload):
    if payload["i"] == 200 and os.path.exists(BROKEN):
        raise ValueError("bad handler: cannot work on 200")
    with open(LOG, "a") as log:
        log.write(f"{payload['i']}\\n")
    return {"y": payload["i"] * 2}


def total(payload):
    with open(LOG, "a") as log:
        log.write("total\\n")
    return {"total": len(payload["ys"])}


def register_handlers(registry):
    registry.register("pipe.Work", work)
    registry.register("pipe.Total", total)
'''

CONFIG = {"retry": {"maximum_attempts": 1, "initial_interval_seconds": 0.1, "start_to_close_seconds": 10.0},
          "child_threshold": 100, "iterations_per_child": 100, "children_in_flight": 2}


def release_commit() -> tuple[str, str]:
    """(version, commit) of the newest recorded release: the commit that added its histories."""
    histories = REPO / "tests" / "replay" / "histories"
    version = max((p.name for p in histories.iterdir() if p.is_dir()), key=Version)
    commit = subprocess.run(["git", "log", "-1", "--format=%H", "--diff-filter=A", "--", str(histories / version)],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    assert commit, f"no commit added tests/replay/histories/{version}"
    return version, commit


def checkout(commit: str, where: Path) -> Path:
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(where, filter="data")
    return where


def ffl_process(tree: Path, *args: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """``ffl ARGS`` of the release in ``tree``, its output in ``log`` (read when the test fails)."""
    with log.open("w") as out:
        return subprocess.Popen([sys.executable, "-m", "interpreter", *args], cwd=tree,
                                env={**env, "PYTHONPATH": str(tree)}, stdout=out, stderr=subprocess.STDOUT)


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGINT)
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


async def test_a_run_started_by_the_previous_release_is_resumed_by_this_one(temporal_client, temporal_service,
                                                                            tmp_path):
    _, commit = release_commit()
    old = checkout(commit, tmp_path / "release")
    (tmp_path / "pipeline.ffl").write_text(PIPELINE)
    (tmp_path / "handlers.py").write_text(HANDLERS)
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))  # the release reads a file only
    log, broken = tmp_path / "calls.log", tmp_path / "broken"
    broken.write_text("yes")
    env = {**os.environ, "RESUME_CALL_LOG": str(log), "RESUME_BROKEN": str(broken)}
    registry = str(tmp_path / "registry")
    queue = "ffl-" + uuid.uuid4().hex[:10]
    published = subprocess.run([sys.executable, "-m", "interpreter", "publish", str(tmp_path / "pipeline.ffl"),
                                "--registry", registry], cwd=old, env={**env, "PYTHONPATH": str(old)},
                               capture_output=True, text=True, timeout=120)
    assert published.returncode == 0, published.stderr
    worker_args = ("worker", "--task-queue", queue, "--interpreter", "--handlers", str(tmp_path / "handlers.py"),
                   "--registry", registry, "--config", str(tmp_path / "config.json"), "--address", temporal_service.address)
    worker = ffl_process(old, *worker_args, env=env, log=tmp_path / "old-worker.log")
    try:
        handle = await temporal_client.start_workflow("pipe.Run", {"items": list(range(300))},
                                                      id="release-" + uuid.uuid4().hex[:10], task_queue=queue)
        try:
            await asyncio.wait_for(handle.result(), 120)
            raise AssertionError("the run should fail at item 200")
        except TimeoutError:
            raise AssertionError((tmp_path / "old-worker.log").read_text()[-3000:]) from None
        except WorkflowFailureError as err:
            assert "cannot work on 200" in str(err.cause)
    finally:
        stop(worker)
    before = log.read_text().split()
    broken.unlink()  # the handler is fixed
    worker = ffl_process(REPO, *worker_args, env=env, log=tmp_path / "worker.log")
    try:
        resumed = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "interpreter", "resume", handle.id, "--wait",
                             "--address", temporal_service.address], cwd=REPO, capture_output=True, text=True,
            timeout=180)
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout.splitlines()[-1]) == {"ys": [n * 2 for n in range(300)], "total": 1}
    finally:
        stop(worker)
    after = log.read_text().split()[len(before):]
    assert "200" in after and "200" not in before
    assert not set(before) & set(after), sorted(set(before) & set(after))[:10]  # no completed item called again
    assert sorted(before + after) == sorted([str(i) for i in [-1, *range(300)]] + ["total"])
