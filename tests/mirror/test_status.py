"""``ffl mirror-status`` renders a run's step tree from what the writer mirrored."""

from __future__ import annotations

import io

from interpreter.activities.mirror import INDEXES
from interpreter.cli import run as ffl
from interpreter.cli.mirror_cmds import status_from_mongo


def _records(wf: str, run: str) -> list[dict]:
    def step(path, state, parent=None, **more):
        return {"kind": "step", "workflow_id": wf, "run_id": run, "path": path, "parent_path": parent,
                "block_path": None, "root_path": "b0", "state": state, **more}  # fmt: skip

    return [
        {"kind": "runner", "workflow_id": wf, "run_id": run, "workflow": "calc.Main", "state": "running",
         "params": {"n": 2}, "time": 1000},
        step("b0", "running", object_type="AndThen", time=1001),
        step("b0/add", "running", "b0", facet="calc.Add", params={"x": 1}, time=1002),
        step("b0/add", "completed", "b0", facet="calc.Add", returns={"sum": 3}, time=1003),
        step("b0/each", "running", "b0", object_type="AndMap", time=1004),
        step("b0/each/foreach[0]/f", "failed", "b0/each", facet="calc.Fail", error="boom", time=1005),
        {"kind": "task", "workflow_id": wf, "run_id": run, "activity_id": "b0/add", "facet": "calc.Add",
         "queue": "calc", "attempt": 2, "state": "completed", "returns": {"sum": 3}, "time": 1003},
        {"kind": "runner", "workflow_id": wf, "run_id": run, "workflow": "calc.Main", "state": "failed",
         "error": "step b0/each failed", "time": 3500},
    ]  # fmt: skip


def test_status_renders_the_step_tree(mongo_uri, mongo_db, make_writer) -> None:
    writer = make_writer(mongo_uri, mongo_db.name)
    writer.write(_records("wf-s", "run-s"))
    assert writer.flush(20)
    out = io.StringIO()
    assert status_from_mongo("wf-s", mongo_uri, mongo_db.name, out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "calc.Main  workflow wf-s  run run-s  failed in 2.500s"
    assert '  params  {"n": 2}' in lines
    assert "  error   step b0/each failed" in lines
    body = lines[lines.index("  error   step b0/each failed") + 1 :]
    assert body == [  # blocks the records left running ended with their failed run
        "  - b0  AndThen  failed",
        "      !! stopped: its run failed",
        "    - add  VariableAssignment  calc.Add  completed  [task completed on calc, 1 retries]",
        '        -> {"sum": 3}',
        "    - each  AndMap  failed",
        "        !! stopped: its run failed",
        "      - f  VariableAssignment  calc.Fail  failed",
        "          !! boom",
        "  4 steps, 1 tasks, 8 log entries",
    ]
    same = io.StringIO()
    assert status_from_mongo("run-s", mongo_uri, mongo_db.name, same) == 0
    assert same.getvalue() == out.getvalue()


def test_status_of_an_unknown_run_fails(mongo_uri, mongo_db, capsys) -> None:
    assert ffl(["mirror-status", "nope", "--mongo", mongo_uri, "--database", mongo_db.name]) == 1
    assert "no run 'nope'" in capsys.readouterr().err


def test_mirror_init_creates_the_indexes(mongo_uri, mongo_db, capsys) -> None:
    assert ffl(["mirror-init", "--mongo", mongo_uri, "--database", mongo_db.name]) == 0
    assert f"{len(INDEXES)} indexes ready" in capsys.readouterr().out
    assert "task_step_id_running_unique_index" in mongo_db.tasks.index_information()


def test_status_reads_the_mirror_named_by_mongodb_uri(mongo_uri, mongo_db, make_writer, capsys, monkeypatch):
    writer = make_writer(mongo_uri, mongo_db.name)
    writer.write(_records("wf-env", "run-env"))
    assert writer.flush(20)
    monkeypatch.setenv("MONGODB_URI", mongo_uri)
    assert ffl(["status", "run-env", "--database", mongo_db.name, "--brief"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("calc.Main  workflow wf-env  run run-env  failed")
    assert "add  VariableAssignment  calc.Add  completed" in out and '-> {"sum": 3}' not in out


def test_status_asks_the_workflow_when_the_mirror_lacks_the_run(temporal_service, mongo_uri, mongo_db, capsys):
    code = ffl(["status", "no-such-run", "--mongo", mongo_uri, "--database", mongo_db.name,
                "--address", temporal_service.address])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 4  # ffl status: the run's state could not be read
    assert f"run no-such-run is not in the mirror at {mongo_uri}; asking the workflow" in err
    assert "no-such-run" in err.splitlines()[-1]  # the query side's own error: no such workflow
