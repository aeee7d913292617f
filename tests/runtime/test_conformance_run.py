"""The core conformance cases through ``ffl run`` as a real subprocess, compared as the conformance README says.

All cases run against the session's dev server (``--address``); the first case of
each folder also runs on an embedded dev server, the command's default.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import core_case_folders

REPO = Path(__file__).resolve().parents[2]


def _cases() -> list:
    found = []
    for folder in core_case_folders():
        cases = json.loads((folder / "cases.json").read_text())
        for index, case in enumerate(cases):
            found.append(pytest.param(folder, case, index == 0, id=f"{folder.name}-{index}"))
    return found


def ffl_run(folder: Path, case: dict, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    files = sorted(str(p) for p in folder.glob("*.ffl"))
    return subprocess.run(
        [sys.executable, "-m", "interpreter", "run", *files, "--workflow", case["workflow"],
         "--input", json.dumps(case.get("inputs", {})), "--handlers", str(folder / "handlers.py"), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def present(values: dict) -> dict:
    """Null and absent returns count as absent."""
    return {k: v for k, v in values.items() if v is not None}


def check(proc: subprocess.CompletedProcess, expect: dict) -> None:
    if "outputs" in expect:
        assert proc.returncode == 0, proc.stderr
        assert present(json.loads(proc.stdout)) == present(expect["outputs"])
    else:
        assert proc.returncode == 1, proc.stdout + proc.stderr
        for text in expect["error_contains"]:
            assert text in proc.stderr


@pytest.mark.parametrize("folder, case, first", _cases())
def test_conformance_case_via_address(temporal_service, folder, case, first):
    check(ffl_run(folder, case, "--address", temporal_service.address), case["expect"])


@pytest.mark.parametrize("folder, case, first", [c for c in _cases() if c.values[2]])
def test_conformance_case_on_embedded_server(folder, case, first):
    proc = ffl_run(folder, case)
    check(proc, case["expect"])
    assert "Temporal dev server at 127.0.0.1:" in proc.stderr and "Web UI: http://127.0.0.1:" in proc.stderr
