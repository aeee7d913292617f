"""The examples' test files run in memory and on Temporal's time-skipping server give identical results.

Outputs, failures (step, facet, type, cause), every facet's calls with their
step paths, the virtual time, signals taken, updates refused, the broken
expectations (none) and the coverage: the in-memory effects stand in for
Temporal only as long as this holds. The slow lane (a real server).
"""

from __future__ import annotations

import io
import json

from interpreter.testing.suite import in_memory, run_files
from interpreter.testing.temporal import TemporalRun


def comparable(report) -> dict:
    def result(r):
        return (r.outputs, r.failure, sorted((c.facet, c.path, json.dumps(c.args, sort_keys=True)) for c in r.calls),
                r.elapsed, sorted(r.signals_taken), r.refused)

    return {"results": {key: result(r) for key, r in report.results.items()},
            "failures": report.failures, "errors": report.errors, "passed": report.passed,
            "coverage": report.coverage.as_json()}


async def test_the_examples_tests_agree_in_memory_and_on_temporal(time_skipping, tmp_path):
    memory = await run_files(["examples"], io.StringIO(), in_memory)
    runner = TemporalRun(time_skipping, tmp_path)
    temporal = await run_files(["examples"], io.StringIO(),
                               lambda tester, case: runner.arun(tester, case.workflow, case.inputs, mocks=case.mocks,
                                                                signals=case.signals, real=case.real))
    assert memory.passed == 9 and memory.status == 0
    assert comparable(temporal) == comparable(memory)
