"""The conformance suite (tests/conformance) on the dev server.

Valid cases compile and run in-process through the runtime harness (one
compile per folder, one set of workers per run), compared as the conformance
README says: a null or absent return counts as absent; ``error_contains``
strings must all appear in the failure message. Invalid files are checked one
by one; each must yield a diagnostic on the expected line containing the
expected words.
"""

from __future__ import annotations

import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from interpreter.compiler import check_sources, compile_sources
from interpreter.program.model import Program
from tests.paths import CONFORMANCE
from tests.runtime.harness import run_ffl


def _case_folders() -> list[Path]:
    """Every valid case folder; an empty or missing suite is an error, never an empty parametrisation."""
    folders = sorted(p for p in (CONFORMANCE / "valid").iterdir() if p.is_dir())
    assert folders, f"no conformance cases under {CONFORMANCE / 'valid'}"
    return folders


def _valid_cases() -> list:
    found = []
    for folder in _case_folders():
        for index, case in enumerate(json.loads((folder / "cases.json").read_text())):
            found.append(pytest.param(folder, index, case, id=f"{folder.name}-{index}"))
    return found


def _invalid_cases() -> list:
    expected = json.loads((CONFORMANCE / "invalid" / "expected.json").read_text())
    return [pytest.param(CONFORMANCE / "invalid" / name, expected[name], id=name) for name in sorted(expected)]


def _sources(folder: Path) -> list[tuple[str, str]]:
    return [(p.name, p.read_text()) for p in sorted(folder.glob("*.ffl"))]


@cache
def _program(folder: Path) -> Program:
    return compile_sources(_sources(folder))


def _register(folder: Path) -> Any:
    path = folder / "handlers.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"conformance_{folder.parent.parent.name}_{folder.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.register_handlers


def _present(values: dict) -> dict:
    """A null or absent return counts as absent (conformance README)."""
    return {k: v for k, v in values.items() if v is not None}


@pytest.mark.parametrize("folder, index, case", _valid_cases())
async def test_valid_case(temporal_client, tmp_path, folder, index, case):
    run = await run_ffl(temporal_client, _program(folder), case["workflow"], case.get("inputs") or {},
                        handlers=_register(folder), tmp_path=tmp_path, timeout=60)
    expect = case["expect"]
    if "outputs" in expect:
        assert run.error is None, run.message
        assert _present(run.result) == _present(expect["outputs"])
    else:
        assert run.error is not None, f"expected a failure, got {run.result}"
        missing = [text for text in expect["error_contains"] if text not in run.message]
        assert not missing, f"{missing} not in: {run.message}"


@pytest.mark.parametrize("path, want", _invalid_cases())
def test_invalid_case(path, want):
    found = check_sources([(path.name, path.read_text())])
    assert found, f"{path.name} compiled without errors"
    on_line = [d for d in found if d.line == want["line"]]
    assert any(all(w in d.message for w in want["contains"]) for d in on_line), [str(d) for d in found]


def test_doc_comments_attach_to_the_next_declaration():
    program = _program(CONFORMANCE / "valid" / "lexical")
    assert "spanning lines" in (program.facets["lex.Id"].doc or "")
    assert (program.facets["lex.Semi"].doc or "").startswith("`andThen` and `catch`")
    assert program.facets["lex.Lexical"].doc is None  # a plain /* */ comment is not a doc comment
    assert program.schemas["lex2.S"].doc == "schema doc"
    assert [i.doc for i in program.implicits["lex2.F"]] == ["implicit doc"]
