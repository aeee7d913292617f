"""Shared conformance programs: every valid case compiles clean, every invalid file is rejected
with an error on the expected line containing the expected words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interpreter.compiler import check_files, compile_files
from tests.paths import CONFORMANCE

VALID = sorted(p for p in (CONFORMANCE / "valid").glob("*") if p.is_dir()) if CONFORMANCE.exists() else []
INVALID_DIR = CONFORMANCE / "invalid"
EXPECTED = json.loads((INVALID_DIR / "expected.json").read_text()) if INVALID_DIR.exists() else {}


@pytest.mark.parametrize("case", VALID, ids=[p.name for p in VALID])
def test_valid_case_compiles_without_diagnostics(case: Path):
    assert [str(d) for d in check_files([str(case)])] == []
    program = compile_files([str(case)])
    assert program.workflows


@pytest.mark.parametrize("name", sorted(EXPECTED), ids=sorted(EXPECTED))
def test_invalid_file_reports_expected_error(name: str):
    path = INVALID_DIR / name
    want = EXPECTED[name]
    found = check_files([str(path)])
    assert found, f"{name} compiled without errors"
    on_line = [d for d in found if d.line == want["line"]]
    assert any(all(w in d.message for w in want["contains"]) for d in on_line), [str(d) for d in found]
