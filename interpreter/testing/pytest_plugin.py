"""The pytest plugin (entry point ``pytest11``: ``ffl``): the ``ffl`` fixture and FFL coverage.

``ffl.load("examples/calc/calc.ffl", handlers=[...])`` compiles a program
once per session and returns its ``Tester``; ``tester.run(...)`` (or ``await
tester.arun(...)``) runs a workflow in memory with mocked facets, virtual
time and signals. ``--ffl-coverage`` prints which steps, cases, catches and
foreach bodies the session's tests reached; ``--ffl-coverage-json FILE``
writes the same as JSON; ``--ffl-temporal`` runs them all on one Temporal
time-skipping server instead. Modules load lazily: a session without FFL
tests pays nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .coverage import Coverage
    from .runner import Tester
    from .temporal import Background, TemporalTester


class FFLSession:
    """Programs compiled once per session, sharing one coverage record."""

    def __init__(self, temporal: bool) -> None:
        from .coverage import Coverage

        self.coverage: Coverage = Coverage()
        self.temporal = temporal
        self._server: Background | None = None
        self._testers: dict[tuple[str, ...], Tester | TemporalTester] = {}

    def load(self, *paths: str | Path, handlers: Sequence[str | Path] = ()) -> Tester | TemporalTester:
        from .runner import Tester

        key = (*(str(p) for p in paths), "--", *(str(h) for h in handlers))
        if key not in self._testers:
            tester = Tester(list(paths), list(handlers), self.coverage)
            self._testers[key] = self._on_temporal(tester) if self.temporal else tester
        return self._testers[key]

    def _on_temporal(self, tester: Tester) -> TemporalTester:
        from .temporal import Background, TemporalTester

        if self._server is None:
            self._server = Background()
        return TemporalTester(tester, self._server)

    def close(self) -> None:
        if self._server is not None:
            self._server.close()


_SESSION_KEY = pytest.StashKey[FFLSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ffl", "FFL workflow tests")
    group.addoption("--ffl-coverage", action="store_true", help="report the FFL places the tests never reached")
    group.addoption("--ffl-coverage-json", metavar="FILE", help="write the FFL coverage as JSON to FILE")
    group.addoption("--ffl-temporal", action="store_true",
                    help="run FFL tests on Temporal's time-skipping test server instead of in memory")


def _session(config: pytest.Config) -> FFLSession:
    if _SESSION_KEY not in config.stash:
        config.stash[_SESSION_KEY] = FFLSession(config.getoption("ffl_temporal"))
    return config.stash[_SESSION_KEY]


@pytest.fixture
def ffl(request: pytest.FixtureRequest) -> FFLSession:
    """Load FFL programs to test (compiled once per session): ``ffl.load(path, handlers=[...]).run(...)``."""
    return _session(request.config)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if _SESSION_KEY not in config.stash:
        return
    coverage = config.stash[_SESSION_KEY].coverage
    if config.getoption("ffl_coverage"):
        terminalreporter.section("FFL coverage")
        for line in coverage.lines():
            terminalreporter.write_line(line)
    target = config.getoption("ffl_coverage_json")
    if target:
        Path(target).write_text(json.dumps(coverage.as_json(), indent=2) + "\n")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SESSION_KEY in config.stash:
        config.stash[_SESSION_KEY].close()
