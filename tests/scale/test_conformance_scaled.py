"""Every conformance case gives the same outcome when each foreach runs in child workflows of two iterations,
every handler runs as a local activity, and runs continue as new early: the scale mechanisms are invisible."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from interpreter.compiler import compile_sources
from interpreter.program.config import RuntimeConfig
from interpreter.program.model import Program
from tests import conformance_suite as suite
from tests.conformance_suite import Case
from tests.runtime.harness import FAST_RETRY, run_ffl

SCALED = RuntimeConfig(retry=FAST_RETRY, child_threshold=1, iterations_per_child=2, children_in_flight=2,
                       continue_after_events=100)


@cache
def _program(folder: Path) -> Program:
    return compile_sources(suite.sources(folder))


async def test_conformance_case_in_children_with_local_activities(temporal_client, tmp_path, conformance_case: Case):
    case = conformance_case
    run = await run_ffl(temporal_client, _program(case.folder), case.workflow, case.inputs,
                        handlers=suite.handlers(case.folder), tmp_path=tmp_path, config=SCALED, local=True,
                        timeout=90)
    case.check(run.result, run.message if run.error is not None else None)
