"""A clean terminal: Ctrl-C, unreachable servers and unregistered search attributes, as real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from interpreter.local import free_port, start_temporal

REPO = Path(__file__).resolve().parents[2]
HELLO = REPO / "examples" / "hello"

SLOW_HANDLERS = """
import os, time
from interpreter.activities.handlers import handler

@handler("hello.Lookup")
def lookup(p):
    with open(os.environ["FFL_STARTED_FILE"], "a") as f:
        f.write(p["name"] + "\\n")
    time.sleep(60)
    return {"language": "en", "formal": True}

@handler("hello.Compose")
def compose(p):  # never reached: the run is interrupted while Lookup hangs
    return {}

@handler("hello.Summarize")
def summarize(p):
    return {}
"""


def ffl(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def _interrupt_a_run(tmp_path: Path, *extra: str) -> tuple[int, str, str, float]:
    """Start ``ffl run`` with a handler that hangs, press Ctrl-C once it runs; (exit, stdout, stderr, seconds)."""
    handlers = tmp_path / "slow_handlers.py"
    handlers.write_text(SLOW_HANDLERS)
    started = tmp_path / "started"
    proc = subprocess.Popen(
        [sys.executable, "-m", "interpreter", "run", str(HELLO / "program.ffl"), "--handlers", str(handlers),
         "--workflow", "hello.Greet", "--input", '{"names": ["Ada"]}', *extra],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "FFL_STARTED_FILE": str(started)},
    )
    deadline = time.monotonic() + 90
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert started.exists(), proc.communicate(timeout=10)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    return proc.returncode, out, err, time.monotonic() - sent


def _clean(err: str) -> None:
    assert "Traceback" not in err and "Task exception was never retrieved" not in err, err
    assert "tonic::" not in err, err


@pytest.mark.slow
def test_ctrl_c_on_the_embedded_server_cancels_the_run_in_one_line(tmp_path):
    code, out, err, seconds = _interrupt_a_run(tmp_path, "--no-ui")
    assert code == 130 and out == ""
    _clean(err)
    lines = [line for line in err.splitlines() if line.startswith("ffl: interrupted")]
    assert len(lines) == 1 and "cancelled; the embedded server stops now" in lines[0], err
    assert seconds < 15


def test_ctrl_c_on_a_shared_server_leaves_the_run_and_says_how_to_cancel_it(temporal_service, tmp_path):
    code, out, err, seconds = _interrupt_a_run(tmp_path, "--address", temporal_service.address)
    assert code == 130 and out == ""
    _clean(err)
    line = next(line for line in err.splitlines() if line.startswith("ffl: interrupted"))
    assert f"is still running on {temporal_service.address}" in line
    workflow_id = line.split("--workflow-id ")[1].split()[0]
    assert f"temporal workflow cancel --workflow-id {workflow_id} --address {temporal_service.address}" in line
    assert seconds < 15
    # It really is still running there: ffl status says so (exit 3); then clean up.
    status = ffl("status", workflow_id, "--address", temporal_service.address, "--json", "--timeout", "3")
    assert status.returncode == 3 and json.loads(status.stdout)["status"] == "running"
    done = subprocess.run([str(Path(sys.executable).parent / "temporal"), "workflow", "terminate",
                           "--workflow-id", workflow_id, "--address", temporal_service.address],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("command", [
    ["run", str(HELLO / "program.ffl"), "--workflow", "hello.Greet", "--input", '{"names": []}'],
    ["status", "some-run"],
    ["graph", "--run", "some-run"],
    ["setup"],
    ["worker", "--task-queue", "ffl", "--connect-timeout", "0"],
])
def test_unreachable_server_is_one_line_naming_address_and_cause(command):
    address = f"127.0.0.1:{free_port()}"
    done = ffl(*command, "--address", address)
    lines = [line for line in done.stderr.splitlines() if "warning" not in line]
    assert lines == [lines[0]] and f"cannot reach Temporal at {address}: connection refused" in lines[0], done.stderr
    _clean(done.stderr)
    assert done.returncode == (4 if command[0] == "status" else 1)


def test_unknown_host_and_unknown_run_are_explained():
    done = ffl("status", "x", "--address", "no-such-host.invalid:7233")
    assert done.returncode == 4 and "the host name does not resolve" in done.stderr


def test_unknown_run_exits_4(temporal_service):
    done = ffl("status", "no-such-run-" + uuid.uuid4().hex[:6], "--address", temporal_service.address)
    assert done.returncode == 4 and "no run 'no-such-run-" in done.stderr
    _clean(done.stderr)


@pytest.mark.slow
def test_unregistered_search_attributes_degrade_to_memo_and_ffl_setup_registers_them(tmp_path):
    """A server without FFL's search attributes: runs still complete (memo only), with one warning; after
    ``ffl setup`` the next run carries them and the UI's filter finds it."""
    server = start_temporal(ui=False, search_attributes={})
    try:
        address = server.address
        args = [str(HELLO / "program.ffl"), "--handlers", str(HELLO / "handlers.py"), "--workflow", "hello.Greet",
                "--input", '{"names": ["Ada"]}', "--address", address]
        first = ffl("run", *args, timeout=120)
        assert first.returncode == 0, first.stderr
        assert "lacks the search attributes FflProgramHash, FflNamespace, FflWorkflow" in first.stderr
        assert "ffl setup --namespace default" in first.stderr
        setup = ffl("setup", "--address", address)
        assert setup.returncode == 0, setup.stderr
        assert setup.stdout.count(": added") == 3
        again = ffl("setup", "--address", address)
        assert again.stdout.count(": already registered") == 3
        second = ffl("run", *args, timeout=120)
        assert second.returncode == 0 and "lacks" not in second.stderr, second.stderr
        listed = subprocess.run([str(Path(sys.executable).parent / "temporal"), "workflow", "list", "--address",
                                 address, "--query", 'FflWorkflow = "hello.Greet"', "-o", "json"],
                                capture_output=True, text=True, timeout=30)
        runs = json.loads(listed.stdout or "[]")
        assert len(runs) == 1  # only the run after setup carries the attribute
        assert set(runs[0]["memo"]["fields"]) >= {"ffl_program_hash", "ffl_workflow", "ffl_namespace"}
    finally:
        server.stop()
