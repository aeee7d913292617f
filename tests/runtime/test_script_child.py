"""What a failing script leaves in the worker's log: the user's code and its place, not the runner's frames."""

from __future__ import annotations

import json
import subprocess
import sys

from interpreter.activities.scripts import CHILD


def run_child(code: str) -> tuple[dict, str]:
    request = {"code": code, "origin": "shop.ffl:12", "params": {"n": 0}, "memory_mb": 512, "cpu_seconds": 10}
    done = subprocess.run([sys.executable, "-I", str(CHILD)], input=json.dumps(request), capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout), done.stderr


def test_a_syntax_error_shows_the_script_line_without_the_runner():
    answer, log = run_child("result['y'] = (\n")
    assert answer["error"] == "SyntaxError"
    assert 'File "shop.ffl:12", line 1' in log
    assert "script_child.py" not in log and "Traceback" not in log


def test_a_runtime_error_shows_the_script_frames_only():
    answer, log = run_child("x = 1\nresult['y'] = x / params['n']\n")
    assert answer == {"error": "ZeroDivisionError", "message": "division by zero"}
    assert 'File "shop.ffl:12", line 2' in log and "ZeroDivisionError" in log
    assert "script_child.py" not in log
