"""The conformance suite (tests/conformance) as data, read only when a test asks for it.

Every reader here raises ``MissingFixture`` naming the path when a folder or
file is missing, empty or malformed. ``tests/conftest.py`` parametrises tests
over these readers at collection time and turns a ``MissingFixture`` into one
test that fails with that message, so a broken suite never shrinks to
nothing. Nothing is read when this module is imported.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from interpreter.activities.handlers import HandlerRegistry, register_module
from tests.paths import CONFORMANCE, CORE_CASES

VALID = CONFORMANCE / "valid"
_loads = itertools.count()
INVALID = CONFORMANCE / "invalid"


class MissingFixture(Exception):
    """A fixture file or folder of the suite is missing or unreadable."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path

    def fail(self) -> None:
        pytest.fail(f"conformance fixture missing: {self}", pytrace=False)


@dataclass(frozen=True)
class Case:
    """One entry of a folder's ``cases.json``: a workflow, its inputs and what it must give."""

    folder: Path
    index: int
    workflow: str
    inputs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    error_contains: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.folder.name}-{self.index}"

    @property
    def succeeds(self) -> bool:
        return self.outputs is not None

    @property
    def where(self) -> str:
        return f"{self.folder.name}/cases.json[{self.index}] {self.workflow} {json.dumps(self.inputs)}"

    def check(self, result: dict[str, Any] | None, failure: str | None) -> None:
        """Compare an outcome (``result`` on success, ``failure`` text otherwise) as the suite's README says."""
        if self.succeeds:
            assert failure is None, f"{self.where}: expected {self.outputs}, failed: {failure}"
            assert present(result or {}) == present(self.outputs or {}), self.where
        else:
            assert failure is not None, f"{self.where}: expected a failure, got {result}"
            missing = [text for text in self.error_contains if text not in failure]
            assert not missing, f"{self.where}: {missing} not in: {failure}"


@dataclass(frozen=True)
class InvalidCase:
    """One file of ``invalid/``: it must be rejected with a message on ``line`` containing ``contains``."""

    path: Path
    line: int
    contains: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.path.name


def present(values: dict[str, Any]) -> dict[str, Any]:
    """A null or absent return counts as absent."""
    return {k: v for k, v in values.items() if v is not None}


def _json(path: Path) -> Any:
    if not path.is_file():
        raise MissingFixture(path, "no such file")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise MissingFixture(path, f"unreadable: {err}") from err


@cache
def valid_folders() -> tuple[Path, ...]:
    """Every valid case folder, sorted."""
    if not VALID.is_dir():
        raise MissingFixture(VALID, "no such folder")
    folders = tuple(sorted(p for p in VALID.iterdir() if p.is_dir()))
    if not folders:
        raise MissingFixture(VALID, "no case folders")
    return folders


@cache
def core_folders() -> tuple[Path, ...]:
    """The folders also run through the slower paths (subprocesses, worker processes, the mirror)."""
    return tuple(folder(name) for name in CORE_CASES)


def folder(name: str) -> Path:
    """The valid case folder ``name``, with its program, handlers and cases."""
    path = VALID / name
    for needed in ("cases.json", "handlers.py"):
        if not (path / needed).is_file():
            raise MissingFixture(path / needed, "no such file")
    if not sources(path):
        raise MissingFixture(path, "no .ffl files")
    return path


def sources(path: Path) -> list[tuple[str, str]]:
    """The ``*.ffl`` files of a case folder as ``(name, text)``, sorted by name."""
    return [(p.name, p.read_text()) for p in sorted(path.glob("*.ffl"))]


@cache
def cases_of(path: Path) -> tuple[Case, ...]:
    entries = _json(path / "cases.json")
    if not isinstance(entries, list) or not entries:
        raise MissingFixture(path / "cases.json", "expected a non-empty list of cases")
    found = []
    for index, entry in enumerate(entries):
        try:
            expect = entry["expect"]
            found.append(Case(folder=path, index=index, workflow=entry["workflow"],
                              inputs=entry.get("inputs") or {}, outputs=expect.get("outputs"),
                              error_contains=tuple(expect.get("error_contains", ()))))  # fmt: skip
        except (KeyError, TypeError, AttributeError) as err:
            raise MissingFixture(path / "cases.json", f"case {index} is malformed: {err!r}") from err
        if found[-1].outputs is None and not found[-1].error_contains:
            raise MissingFixture(path / "cases.json", f"case {index} expects neither outputs nor an error")
    return tuple(found)


def valid_cases() -> list[Case]:
    return [case for path in valid_folders() for case in cases_of(folder(path.name))]


def core_cases() -> list[Case]:
    return [case for path in core_folders() for case in cases_of(path)]


@cache
def invalid_cases() -> tuple[InvalidCase, ...]:
    expected = _json(INVALID / "expected.json")
    if not isinstance(expected, dict) or not expected:
        raise MissingFixture(INVALID / "expected.json", "expected a non-empty object")
    found = []
    for name in sorted(expected):
        if not (INVALID / name).is_file():
            raise MissingFixture(INVALID / name, "listed in expected.json but missing")
        want = expected[name]
        found.append(InvalidCase(INVALID / name, want["line"], tuple(want["contains"])))
    unlisted = sorted(p.name for p in INVALID.glob("*.ffl") if p.name not in expected)
    if unlisted:
        raise MissingFixture(INVALID / "expected.json", f"no expectation for {unlisted}")
    return tuple(found)


def handlers(path: Path) -> HandlerRegistry:
    """A case folder's handlers (its ``handlers.py``), imported afresh so no run sees another run's state."""
    file = folder(path.name) / "handlers.py"
    spec = importlib.util.spec_from_file_location(f"conformance_{path.name}_{next(_loads)}", file)
    assert spec is not None and spec.loader is not None, file
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registry = HandlerRegistry()
    register_module(module, registry)  # a case without event facets registers none
    return registry


def handler_queues(path: Path) -> list[str]:
    """The namespace task queues a folder's handlers serve."""
    return handlers(path).queues()


def valid_texts() -> list[str]:
    """Every ``.ffl`` text of the valid folders: seeds for the property tests."""
    return [text for path in valid_folders() for _, text in sources(path)]


def ffl_texts() -> list[str]:
    """Every ``.ffl`` text of the suite, valid and invalid."""
    return valid_texts() + [case.path.read_text() for case in invalid_cases()]


PARAMETERS: dict[str, Callable[[], Iterable[Any]]] = {
    "conformance_case": valid_cases,
    "conformance_folder": valid_folders,
    "core_case": core_cases,
    "core_folder": core_folders,
    "invalid_case": invalid_cases,
}
"""Test arguments ``tests/conftest.py`` parametrises, and the reader giving their values."""


def ident(value: Any) -> str:
    return value.name if isinstance(value, Path) else value.id
