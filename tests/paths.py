"""Where the tests' fixtures are: inside the checkout, never beside it."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO / "tests" / "conformance"

CORE_CASES = ("dataflow", "foreach", "mixins", "when")
"""Conformance folders also run through the slower paths (``ffl run`` subprocesses, worker processes)."""


def core_case_folders() -> list[Path]:
    """The core folders; a missing one is an error, not a smaller test."""
    folders = [CONFORMANCE / "valid" / name for name in CORE_CASES]
    missing = [str(f) for f in folders if not (f / "cases.json").is_file()]
    assert not missing, f"conformance folders missing: {missing}"
    return folders
