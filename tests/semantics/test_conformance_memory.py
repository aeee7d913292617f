"""Every conformance case, in memory: the language's semantics without a server, in the fast lane.

The same cases run on a real dev server in tests/runtime/test_conformance_run.py and
tests/test_conformance.py (the slow lane), so the in-memory effects never stand alone as proof.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from interpreter.compiler import compile_sources
from interpreter.program.model import Program
from tests import conformance_suite as suite
from tests.conformance_suite import Case

from .harness import failure_text, run_memory


@cache
def _program(folder: Path) -> Program:
    return compile_sources(suite.sources(folder))


async def test_conformance_case_in_memory(conformance_case: Case):
    case = conformance_case
    run = await run_memory(_program(case.folder), case.workflow, case.inputs, suite.handlers(case.folder))
    case.check(run.returns, failure_text(run))
