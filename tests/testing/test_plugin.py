"""The pytest plugin as a user meets it: installed by its entry point, reporting the session's FFL coverage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.paths import REPO


def test_the_plugin_reports_what_the_sessions_tests_left_unreached(tmp_path: Path):
    test = tmp_path / "test_greet.py"
    test.write_text(
        "def test_nobody(ffl):\n"
        f"    hello = ffl.load({str(REPO / 'examples/hello/program.ffl')!r})\n"
        "    result = hello.run('hello.Greet', {'names': []}, mocks={'hello.Summarize': {'summary': '', 'count': 0}})\n"
        "    assert result.outputs['count'] == 0\n"
        "    assert ffl.load(%r) is hello  # compiled once per session\n" % str(REPO / "examples/hello/program.ffl"))
    report = tmp_path / "coverage.json"
    done = subprocess.run([sys.executable, "-m", "pytest", str(test), "-q", "-p", "no:cacheprovider", "--ffl-coverage",
                           "--ffl-coverage-json", str(report), "--rootdir", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "FFL coverage: 2/8 places (25.0%)" in done.stdout
    assert "program.ffl:16: case case who.formal in hello.GreetAll" in done.stdout
    missed = json.loads(report.read_text())["missed"]
    assert [(Path(m["file"]).name, m["line"], m["kind"]) for m in missed] == [
        ("program.ffl", 14, "foreach"), ("program.ffl", 15, "step"), ("program.ffl", 16, "case"),
        ("program.ffl", 17, "step"), ("program.ffl", 20, "case"), ("program.ffl", 21, "step")]
