"""``ffl run``, ``ffl publish`` and ``ffl status`` as real subprocesses against the session dev server."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HELLO = REPO / "examples" / "hello"

FAILING = """
namespace bad {
    event facet Ok(x: Long) => (y: Long)
    event facet Boom(x: Long) => (y: Long)
    workflow Run(x: Long) => (y: Long) andThen {
        first = Ok(x = $.x)
        second = Boom(x = first.y)
        yield Run(y = second.y)
    }
}
"""

FAILING_HANDLERS = """
from interpreter.activities.handlers import NonRetryableError, handler

@handler("bad.Ok")
def ok(p):
    return {"y": p["x"] + 1}

@handler("bad.Boom")
def boom(p):
    raise NonRetryableError(f"cannot boom {p['x']}")
"""


def ffl(*args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, **kwargs)  # fmt: skip


def test_example_runs_and_prints_returns_as_json(temporal_service):
    proc = ffl("run", str(HELLO / "program.ffl"), "--handlers", str(HELLO / "handlers.py"),
               "--workflow", "Greet", "--input", '{"names": ["Ada", "Linus", "Bob"]}',  # unique short name
               "--address", temporal_service.address)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["lines"] == ["Good day, Ada!", "Moi, Linus!", "Hi, Bob!"]
    assert result["count"] == 3 and result["summary"].startswith("Good day, Ada! Moi")
    assert proc.stderr == ""  # off a terminal nothing extra is printed


def test_failure_names_step_facet_and_cause(temporal_service, tmp_path):
    (tmp_path / "bad.ffl").write_text(FAILING)
    (tmp_path / "bad_handlers.py").write_text(FAILING_HANDLERS)
    proc = ffl("run", str(tmp_path / "bad.ffl"), "--handlers", str(tmp_path / "bad_handlers.py"),
               "--workflow", "bad.Run", "--input", '{"x": 1}', "--address", temporal_service.address)  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    assert "second" in proc.stderr and "bad.Boom" in proc.stderr and "cannot boom 2" in proc.stderr
    assert "NonRetryableError" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_handler_is_refused_before_the_embedded_server_starts(tmp_path):
    """On its own server nobody else could serve a facet without a handler: refused up front, exit 2."""
    (tmp_path / "bad.ffl").write_text(FAILING)
    proc = ffl("run", str(tmp_path / "bad.ffl"), "--workflow", "bad.Run", "--input", '{"x": 1}', "--no-ui")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: no handler loaded for bad.Boom, bad.Ok: on the embedded server")
    assert "--handlers" in proc.stderr and "Temporal dev server" not in proc.stderr


def test_two_inputs_and_no_workflow_are_usage_errors(tmp_path):
    proc = ffl("run", str(CALC / "calc.ffl"), "--type", "calc.Double", "--input", '{"a": 1}', "--input", '{}')
    assert proc.returncode == 2 and "--input given 2 times" in proc.stderr
    proc = ffl("run", str(CALC / "calc.ffl"))
    assert proc.returncode == 2 and "--type NAME" in proc.stderr


def test_compile_errors_and_usage_errors(tmp_path):
    (tmp_path / "broken.ffl").write_text("namespace x {\n  workflow W() => (a: Long) andThen {\n    s = Nope()\n  }\n}\n")
    proc = ffl("run", str(tmp_path / "broken.ffl"), "--workflow", "x.W")
    assert proc.returncode == 1 and proc.stdout == ""
    assert f"{tmp_path / 'broken.ffl'}:3:" in proc.stderr
    proc = ffl("run", str(HELLO / "program.ffl"), "--workflow", "hello.Nope")
    assert proc.returncode == 2 and "hello.Greet" in proc.stderr
    proc = ffl("run", str(HELLO / "program.ffl"), "--workflow", "hello.Lookup")
    assert proc.returncode == 2 and "not a workflow but an event facet" in proc.stderr
    proc = ffl("run", str(HELLO / "program.ffl"), "--workflow", "hello.Greet", "--input", "[1]")
    assert proc.returncode == 2 and "JSON object" in proc.stderr


def test_publish_prints_hash_workflows_and_start_line(tmp_path):
    registry = tmp_path / "registry"
    proc = ffl("publish", str(HELLO / "program.ffl"), "--registry", str(registry))
    assert proc.returncode == 0, proc.stderr
    digest = proc.stdout.split()[1]
    assert (registry / "programs" / f"{digest}.json").is_file()
    pointer = json.loads((registry / "workflows" / "hello.Greet.json").read_text())
    assert pointer["hash"] == digest and "@" in pointer["publisher"] and pointer["published"].startswith("20")
    # owner-only: programs and pointers may tell more than their owner wants to share
    for path in [registry, *registry.rglob("*")]:
        assert path.stat().st_mode & 0o077 == 0, oct(path.stat().st_mode)
    assert "temporal workflow start --type hello.Greet --task-queue ffl --input '{\"names\": null}'" in proc.stdout


def test_progress_on_a_terminal(temporal_service):
    """With stderr on a terminal the step counts are shown; stdout still holds only the JSON."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "interpreter", "run", str(HELLO / "program.ffl"), "--handlers",
         str(HELLO / "handlers.py"), "--workflow", "hello.Greet", "--input", '{"names": ["Ada"]}',
         "--address", temporal_service.address],
        cwd=REPO, stdout=subprocess.PIPE, stderr=follower, text=True, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    out = proc.stdout.read()
    assert proc.wait(30) == 0
    assert json.loads(out)["count"] == 1
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode())
    assert "steps: 4 done, 0 running, 0 failed" in text


def test_keep_server_waits_for_ctrl_c(temporal_service):
    proc = subprocess.Popen(
        [sys.executable, "-m", "interpreter", "run", str(HELLO / "program.ffl"), "--handlers",
         str(HELLO / "handlers.py"), "--workflow", "hello.Greet", "--input", '{"names": []}',
         "--address", temporal_service.address, "--keep-server"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    line = proc.stderr.readline()
    assert "Ctrl-C" in line
    time.sleep(0.2)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    assert json.loads(proc.stdout.read()) == {"lines": [], "summary": "", "count": 0}


def test_run_with_mongo_mirror(temporal_service, mongo_service, mongo_db_name):
    """--mongo turns the mirror on: the runner, its steps and the handler tasks land in MongoDB."""
    from pymongo import MongoClient

    uri = f"{mongo_service.extra['uri']}/{mongo_db_name}"
    proc = ffl("run", str(HELLO / "program.ffl"), "--handlers", str(HELLO / "handlers.py"),
               "--workflow", "hello.Greet", "--input", '{"names": ["Ada", "Bob"]}',
               "--address", temporal_service.address, "--mongo", uri)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    db = MongoClient(uri, serverSelectionTimeoutMS=5000)[mongo_db_name]
    runners = list(db.runners.find({}))
    assert [r["state"] for r in runners] == ["completed"]
    assert db.steps.count_documents({}) >= 6  # all, s, 2 lookups, 2 composes
    assert db.tasks.count_documents({"state": "completed"}) == 5  # 2 Lookup + 2 Compose + 1 Summarize
    assert db.logs.count_documents({}) >= 2  # the Lookup handler's _step_log lines
    # the program is stored in the mirror too, so the runner's flow reference resolves
    assert db.flows.count_documents({"uuid": runners[0]["flow_id"]}) == 1
    assert db.workflows.find_one({"name": "hello.Greet"}) is not None


CALC = REPO / "examples" / "calc"

WRONG_CALC_HANDLERS = """
def add(payload):
    return {"sum": payload["x"] + payload["y"] + 1000}


def register_handlers(registry):
    registry.register("calc.Add", add)
"""


def test_two_sessions_on_one_server_never_take_each_others_tasks(temporal_service, tmp_path):
    """``ffl run --address`` serves its run on queues of its own: a session left up (--keep-server) with
    other handlers and another registry takes none of the next session's tasks."""
    (tmp_path / "wrong.py").write_text(WRONG_CALC_HANDLERS)
    other = subprocess.Popen(
        [sys.executable, "-m", "interpreter", "run", str(CALC / "calc.ffl"), "--type", "calc.Double",
         "--input", '{"a": 1}', "--handlers", str(tmp_path / "wrong.py"), "--registry", str(tmp_path / "a"),
         "--address", temporal_service.address, "--keep-server"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert "Ctrl-C" in other.stderr.readline()  # its workers are up and polling
        for a in (2, 3, 4):
            proc = ffl("run", str(CALC / "calc.ffl"), "--type", "calc.Double", "--input", json.dumps({"a": a}),
                       "--handlers", str(CALC / "handlers.py"), "--registry", str(tmp_path / "b"),
                       "--address", temporal_service.address)  # fmt: skip
            assert proc.returncode == 0, proc.stderr
            assert json.loads(proc.stdout) == {"total": 2 * a}
    finally:
        other.send_signal(signal.SIGINT)
        assert other.wait(30) == 0
    assert json.loads(other.stdout.read()) == {"total": 1002}


def test_a_run_on_its_own_queue_is_found_by_its_workflow_id(temporal_service):
    """--workflow-id names the run, as in temporal workflow start; its queue is ffl-run-<id>."""
    proc = ffl("run", str(CALC / "calc.ffl"), "-w", "calc.Double", "--input", '{"a": 5}', "--handlers",
               str(CALC / "handlers.py"), "--workflow-id", "calc-own-queue", "--address", temporal_service.address)
    assert proc.returncode == 0, proc.stderr
    shown = ffl("status", "calc-own-queue", "--json", "--address", temporal_service.address)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["task_queue"].startswith("ffl-run-")


def test_publish_shows_each_parameters_default(tmp_path):
    (tmp_path / "d.ffl").write_text('namespace d { workflow W(a: Long, n: Long = 5, s: String = "x") => (v: Long) '
                                    'andThen { yield W(v = $.n) } }')
    proc = ffl("publish", str(tmp_path / "d.ffl"), "--registry", str(tmp_path / "registry"))
    assert proc.returncode == 0, proc.stderr
    assert 'workflow d.W(a: Long, n: Long = 5, s: String = "x")' in proc.stdout.splitlines()


def test_with_the_web_ui_up_each_step_is_an_activity_with_its_summary(tmp_path):
    """On the embedded server with its Web UI, handlers run as (remote) activities, so the UI shows each
    step's summary, timing and retries; with --no-ui they stay local activities (markers)."""
    import asyncio

    from temporalio.api.enums.v1 import EventType
    from temporalio.client import Client

    proc = subprocess.Popen(
        [sys.executable, "-m", "interpreter", "run", str(CALC / "calc.ffl"), "--type", "calc.Double", "--input",
         '{"a": 3}', "--handlers", str(CALC / "handlers.py"), "--workflow-id", "double-ui", "--keep-server"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        first = proc.stderr.readline()
        address = re.search(r"Temporal dev server at (\S+?),", first)
        assert address, first
        assert "Ctrl-C" in proc.stderr.readline()

        async def scheduled() -> list[tuple[str, str]]:
            client = await Client.connect(address[1])
            found = []
            async for event in client.get_workflow_handle("double-ui").fetch_history_events():
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                    attributes = event.activity_task_scheduled_event_attributes
                    summary = [""]
                    if event.user_metadata.HasField("summary"):
                        summary = await client.data_converter.decode([event.user_metadata.summary])
                    found.append((attributes.activity_type.name, summary[0]))
            return found

        found = asyncio.run(scheduled())
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    assert json.loads(proc.stdout.read()) == {"total": 6}
    assert [(kind, summary.split(" · ")[0]) for kind, summary in found if kind == "calc.Add"] == [
        ("calc.Add", "s = calc.Add(x = $.a, y = $.a)")]
