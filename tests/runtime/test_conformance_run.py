"""The core conformance cases through ``ffl run`` as a real subprocess, compared as the conformance README says.

Every core case runs against the session's dev server (``--address``); the
first case of each core folder also runs on an embedded dev server, the
command's default.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import conformance_suite as suite
from tests.conformance_suite import Case
from tests.paths import REPO


def ffl_run(case: Case, *extra: str, timeout: float = 120) -> subprocess.CompletedProcess:
    files = [str(case.folder / name) for name, _ in suite.sources(case.folder)]
    return subprocess.run(
        [sys.executable, "-m", "interpreter", "run", *files, "--workflow", case.workflow,
         "--input", json.dumps(case.inputs), "--handlers", str(case.folder / "handlers.py"), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


def check(case: Case, proc: subprocess.CompletedProcess) -> None:
    """Exit 0 with the returns as JSON on stdout, or exit 1 with the failure on stderr."""
    if case.succeeds:
        assert proc.returncode == 0, f"{case.where}: {proc.stderr}"
        case.check(json.loads(proc.stdout), None)
    else:
        assert proc.returncode == 1, f"{case.where}: {proc.stdout}{proc.stderr}"
        case.check(None, proc.stderr)


def test_conformance_case_via_address(temporal_service, core_case: Case):
    check(core_case, ffl_run(core_case, "--address", temporal_service.address))


@pytest.mark.slow  # a real server in a process of its own
def test_conformance_case_on_embedded_server(core_folder):
    case = suite.cases_of(core_folder)[0]
    proc = ffl_run(case)
    check(case, proc)
    assert "Web UI" not in proc.stderr  # off a terminal: the server is gone when the command ends
