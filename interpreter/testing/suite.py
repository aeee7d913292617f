"""Run test files and report like pytest: a line per file, one line per broken expectation, coverage, a summary.

The runs go to a ``Run`` function: in memory by default, or on Temporal's
time-skipping server (temporal.py), with the same files and the same
expectations.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from interpreter.activities.handlers import HandlerLoadError
from interpreter.compiler.diagnostics import CompileError

from .coverage import Coverage
from .files import Case, Problem, TestFile, TestFileError, check, discover, load
from .mocks import MockError
from .runner import Result, Tester

Run = Callable[[Tester, Case], Awaitable[Result]]


async def in_memory(tester: Tester, case: Case) -> Result:
    return await tester.arun(case.workflow, case.inputs, mocks=case.mocks, signals=case.signals, real=case.real)


@dataclass
class Report:
    passed: int = 0
    failures: list[Problem] = field(default_factory=list)  # broken expectations, one per line
    errors: list[str] = field(default_factory=list)  # files or tests that could not run
    failed_tests: int = 0
    coverage: Coverage = field(default_factory=Coverage)
    results: dict[tuple[str, str], Result] = field(default_factory=dict)  # (file, test name): its result

    @property
    def status(self) -> int:
        """pytest's exit statuses: 0 passed, 1 some failed, 2 a file could not be run, 5 no tests."""
        if self.errors:
            return 2
        if self.failed_tests:
            return 1
        return 0 if self.passed else 5


async def run_files(paths: list[str], out: TextIO, run: Run = in_memory) -> Report:
    report = Report()
    started = time.perf_counter()
    try:
        files = discover(paths or ["."])
    except TestFileError as err:
        report.errors.append(str(err))
        files = []
    testers: dict[tuple[Path, ...], Tester] = {}
    for path in files:
        try:
            file = load(path)
            key = (*file.programs, *file.handlers)
            if key not in testers:
                testers[key] = Tester(file.programs, file.handlers, report.coverage)
        except (TestFileError, CompileError, HandlerLoadError, OSError) as err:
            report.errors.append(str(err))
            print(f"{path} E", file=out)
            continue
        marks = await _run_file(file, testers[key], run, report)
        print(f"{path} {marks}", file=out)
    _summary(report, out, time.perf_counter() - started)
    return report


async def _run_file(file: TestFile, tester: Tester, run: Run, report: Report) -> str:
    marks = ""
    for case in file.cases:
        try:
            result = await run(tester, case)
        except MockError as err:
            report.errors.append(str(Problem(str(file.path), case.line, case.name, str(err))))
            marks += "E"
            continue
        report.results[(str(file.path), case.name)] = result
        problems = list(check(file.path, case, result))
        if problems:
            report.failures.extend(problems)
            report.failed_tests += 1
            marks += "F"
        else:
            report.passed += 1
            marks += "."
    return marks


def _summary(report: Report, out: TextIO, seconds: float) -> None:
    if report.errors:
        print("=== ERRORS ===", file=out)
        for error in report.errors:
            print(error, file=out)
    if report.failures:
        print("=== FAILURES ===", file=out)
        for problem in report.failures:
            print(problem, file=out)
    for line in report.coverage.lines():
        print(line, file=out)
    parts = [f"{report.failed_tests} failed"] if report.failed_tests else []
    parts.append(f"{report.passed} passed")
    if report.errors:
        parts.append(f"{len(report.errors)} errors")
    print(f"=== {', '.join(parts)} in {seconds:.2f}s ===", file=out)
