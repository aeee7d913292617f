"""The conformance suite (tests/conformance, format in its README) on the dev server.

Every valid folder compiles without diagnostics; every case of it runs
in-process through the runtime harness (one compile per folder, one set of
workers per run) and gives the expected outputs or a failure containing the
expected words. Every invalid file is rejected with a diagnostic on the
expected line containing the expected words. The slower paths (``ffl run``
subprocesses, worker processes, the mirror) run the core folders from
``tests/conformance_suite.py`` too.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from interpreter.compiler import check_sources, compile_sources
from interpreter.program.model import Program
from tests import conformance_suite as suite
from tests.conformance_suite import Case, InvalidCase
from tests.runtime.harness import run_ffl


@cache
def _program(folder: Path) -> Program:
    return compile_sources(suite.sources(folder))


def test_valid_folder_compiles_without_diagnostics(conformance_folder: Path):
    assert [str(d) for d in check_sources(suite.sources(conformance_folder))] == []
    assert _program(conformance_folder).workflows


async def test_valid_case(temporal_client, tmp_path, conformance_case: Case):
    case = conformance_case
    run = await run_ffl(temporal_client, _program(case.folder), case.workflow, case.inputs,
                        handlers=suite.handlers(case.folder), tmp_path=tmp_path, timeout=60)  # fmt: skip
    case.check(run.result, run.message if run.error is not None else None)


def test_invalid_case(invalid_case: InvalidCase):
    path = invalid_case.path
    found = check_sources([(path.name, path.read_text())])
    assert found, f"{path.name} compiled without errors"
    on_line = [d for d in found if d.line == invalid_case.line]
    assert any(all(w in d.message for w in invalid_case.contains) for d in on_line), [str(d) for d in found]


def test_doc_comments_attach_to_the_next_declaration():
    program = _program(suite.folder("lexical"))
    assert "spanning lines" in (program.facets["lex.Id"].doc or "")
    assert (program.facets["lex.Semi"].doc or "").startswith("`andThen` and `catch`")
    assert program.facets["lex.Lexical"].doc is None  # a plain /* */ comment is not a doc comment
    assert program.schemas["lex2.S"].doc == "schema doc"
    assert [i.doc for i in program.implicits["lex2.F"]] == ["implicit doc"]
