"""Layer 6: test FFL like code — mocked facets, virtual time, signals at chosen moments, FFL coverage.

``Tester`` (runner.py) runs a workflow in memory; ``ffl test`` (suite.py,
files.py) runs ``*.test.yaml`` files; the pytest plugin (pytest_plugin.py)
gives tests the ``ffl`` fixture; temporal.py runs the same on Temporal's
time-skipping server. Names are imported on first use, so loading the
pytest plugin costs a session nothing.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Tester": "runner", "Result": "runner", "Failure": "runner", "Called": "runner", "signal": "runner",
    "update": "runner", "REAL": "mocks", "MockError": "mocks", "Coverage": "coverage", "Place": "coverage",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
