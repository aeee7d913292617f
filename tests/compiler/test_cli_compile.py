"""``ffl check|compile|graph`` as a user runs them: real subprocesses, exit codes and output."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from interpreter.compiler import compile_files
from interpreter.program.serialize import program_to_json

GOOD = """namespace calc {
    event facet Add(x: Long, y: Long) => (sum: Long)
    workflow Twice(a: Long) => (r: Long) andThen {
        s = Add(x = $.a, y = $.a)
        t = Add(x = s.sum, y = s.sum) andThen when {
            case t.sum > 10 => { big = Add(x = 1, y = 1) }
            case _ => { }
        } catch {
            yield Add(sum = 0)
        }
        yield Twice(r = t.sum)
    }
    workflow Other() andThen foreach v in [1, 2] {
        e = Add(x = $.v, y = 1)
    }
}
"""

BAD = """namespace broken {
    event facet Add(x: Long, y: Long) => (sum: Long)
    workflow W(a: Long) => (r: Long) andThen {
        s = Add(x = $.b, y = 1)
        yield W(r = s.zzz)
    }
}
"""


def ffl(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], capture_output=True, text=True,
                          timeout=60, cwd=cwd)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "good.ffl").write_text(GOOD)
    (tmp_path / "bad.ffl").write_text(BAD)
    return {"good": tmp_path / "good.ffl", "bad": tmp_path / "bad.ffl", "dir": tmp_path}


def test_check_ok(files):
    done = ffl("check", str(files["good"]))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok: 1 file, 2 workflows"


def test_check_reports_every_diagnostic_and_fails(files):
    done = ffl("check", str(files["good"]), str(files["bad"]))
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    bad = str(files["bad"])
    assert lines == [f"{bad}:4:21: unknown parameter '$.b'",
                     f"{bad}:5:23: unknown return 'zzz' of step 's' (facet 'broken.Add' has no such return)"]
    assert "2 problems" in done.stderr


def test_check_unreadable_path(files):
    done = ffl("check", str(files["dir"] / "nope.ffl"))
    assert done.returncode == 1
    assert "nope.ffl:1:1: cannot read file" in done.stdout


def test_compile_to_stdout_and_file(files):
    done = ffl("compile", str(files["good"]))
    assert done.returncode == 0, done.stderr
    expected = program_to_json(compile_files([str(files["good"])]))
    assert done.stdout.strip() == expected
    assert sorted(json.loads(done.stdout)["facets"]) == ["calc.Add", "calc.Other", "calc.Twice"]
    digest = hashlib.sha256(expected.encode()).hexdigest()
    assert done.stderr == f"program {digest}\n"  # the hash runs pin, as ffl publish prints it
    out = files["dir"] / "program.json"
    done = ffl("compile", str(files["good"]), "-o", str(out))
    assert done.returncode == 0 and done.stdout == "" and done.stderr == f"program {digest} written to {out}\n"
    assert out.read_text().strip() == expected


def test_compile_fails_with_diagnostics(files):
    done = ffl("compile", str(files["bad"]))
    assert done.returncode == 1
    assert "zzz" in done.stdout and "{" not in done.stdout


def test_graph_mermaid_has_nodes_edges_and_subgraphs(files):
    done = ffl("graph", str(files["good"]), "--workflow", "Twice", "--format", "mermaid")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("flowchart TD")
    assert '["s = calc.Add"]' in text and '["t = calc.Add"]' in text
    assert "n_b0_s --> n_b0_t" in text  # node ids follow the steps' runtime paths
    assert 'subgraph n_b0_t_b0_box["andThen when"]' in text
    assert 'subgraph n_b0_t_catch_box["catch"]' in text and "n_b0_t -.->|on error| n_b0_t_catch_box" in text


def test_graph_dot_by_qualified_name(files):
    done = ffl("graph", str(files["good"]), "--workflow", "calc.Other", "--format", "dot")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("digraph workflow {")
    assert "subgraph cluster_" in done.stdout and 'label="foreach v in [1, 2]"' in done.stdout


def test_graph_unknown_workflow_lists_available(files):
    done = ffl("graph", str(files["good"]), "--workflow", "Nope")
    assert done.returncode == 2
    assert "unknown workflow 'Nope'" in done.stderr
    assert "calc.Other, calc.Twice" in done.stderr


def test_compile_to_unwritable_path_is_an_error_not_a_traceback(files):
    done = ffl("compile", str(files["good"]), "-o", str(files["dir"] / "no" / "such" / "dir.json"))
    assert done.returncode == 1
    assert "cannot write" in done.stderr and "Traceback" not in done.stderr


WARNED = """namespace tasks {
    event facet Fetch(url: String) => (body: String)
}
namespace flows {
    workflow Get(url: String) => (body: String) andThen {
        f = Fetch(url = $.url) with Timeout(minutes = 120)
        yield Get(body = f.body)
    }
}
"""


def test_check_prints_warnings_to_stderr_and_exits_0(tmp_path):
    path = tmp_path / "warned.ffl"
    path.write_text(WARNED)
    done = ffl("check", str(path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "ok: 1 file, 1 workflow"
    warnings = [line for line in done.stderr.splitlines() if ": warning: " in line]
    assert warnings == [
        f"{path}:6:13: warning: facet 'Fetch' is not visible here; using 'tasks.Fetch', the only declaration of "
        "that name (add 'use tasks' to namespace flows)",
        f"{path}:6:37: warning: mixin 'Timeout' names a facet declared nowhere in the program: it contributes "
        "nothing (declare the facet to pass its arguments) (did you mean 'ffl.Timeout'?)",
    ]


def test_strict_turns_warnings_into_errors(tmp_path):
    path = tmp_path / "warned.ffl"
    path.write_text(WARNED)
    done = ffl("check", "--strict", str(path))
    assert done.returncode == 1
    assert [line.split(": ", 1)[0] for line in done.stdout.splitlines()] == [f"{path}:6:13", f"{path}:6:37"]
    assert "warning:" not in done.stdout and "2 problems" in done.stderr
    assert ffl("compile", "--strict", str(path)).returncode == 1


def test_compile_prints_warnings_and_the_same_program(tmp_path):
    path = tmp_path / "warned.ffl"
    path.write_text(WARNED)
    done = ffl("compile", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == program_to_json(compile_files([str(path)]))
    assert done.stderr.count(": warning: ") == 2
