"""Where the tests' fixtures are: inside the checkout, never beside it."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO / "tests" / "conformance"

CORE_CASES = ("dataflow", "foreach", "mixins", "when")
"""Conformance folders also run through the slower paths (``ffl run`` subprocesses, worker processes, the mirror)."""
