"""Test files for authors who write no Python: ``*.test.yaml`` beside the FFL (docs/testing.md).

A file names its program (default: every ``.ffl`` file in its folder) and
optional handler files, then lists tests: a workflow, its inputs, mocked
facets, signals, and what to expect (outputs, a failure, the calls each
facet received, virtual time). Every mistake in a file and every broken
expectation is reported at ``file:line`` of the YAML that says it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from interpreter.semantics.memory import Message

from .mocks import REAL, MockError, handler_of, mocked_failure
from .runner import Result

SUFFIXES = (".test.yaml", ".test.yml")


class Located(dict):
    """A YAML mapping that remembers its own line and each key's (1-based)."""

    line: int = 0
    lines: dict[str, int]


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> Located:
    value = Located(loader.construct_mapping(node, deep=True))
    value.line = node.start_mark.line + 1
    value.lines = {key.value: key.start_mark.line + 1 for key, _ in node.value if isinstance(key, yaml.ScalarNode)}
    return value


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


class TestFileError(Exception):
    """A test file that cannot be read as one: the message starts with ``file:line``."""

    __test__ = False  # no pytest test class


@dataclass(frozen=True)
class Problem:
    """A broken expectation (or a test that could not run), at ``file:line``."""

    file: str
    line: int
    test: str
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.test}: {self.text}"


@dataclass
class Case:
    """One test of a file, as written."""

    name: str
    line: int
    workflow: str
    inputs: dict[str, Any]
    mocks: dict[str, Any]
    signals: list[Message]
    real: bool
    expect: Located


@dataclass
class TestFile:
    __test__ = False  # no pytest test class

    path: Path
    programs: list[Path]
    handlers: list[Path]
    cases: list[Case] = field(default_factory=list)


def discover(paths: list[str]) -> list[Path]:
    """Test files named by ``paths``: the files themselves, and every ``*.test.yaml`` under a folder."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.name.endswith(SUFFIXES)))
        elif path.exists():
            found.append(path)
        else:
            raise TestFileError(f"{given}: no such file or folder")
    return found


def _fail(path: Path, line: int, text: str) -> TestFileError:
    return TestFileError(f"{path}:{line}: {text}")


def _mapping_at(path: Path, value: Any, line: int, what: str) -> Located:
    if not isinstance(value, Located):
        raise _fail(path, line, f"{what} must be a mapping, got {type(value).__name__}")
    return value


def _check_keys(path: Path, mapping: Located, allowed: tuple[str, ...], what: str) -> None:
    for key in mapping:
        if key not in allowed:
            raise _fail(path, mapping.lines.get(key, mapping.line),
                        f"{what} has no key '{key}' (keys: {', '.join(allowed)})")


def load(path: Path) -> TestFile:
    """Read and check one test file; raises TestFileError naming the line of the first mistake."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        raise _fail(path, mark.line + 1 if mark else 0, f"not valid YAML: {err.problem}") from None
    except OSError as err:
        raise TestFileError(f"{path}: {err.strerror}") from None
    top = _mapping_at(path, data, 1, "a test file")
    _check_keys(path, top, ("program", "handlers", "tests"), "a test file")
    folder = path.parent
    programs = [folder / p for p in _strings(path, top, "program")] or sorted(folder.glob("*.ffl"))
    if not programs:
        raise _fail(path, top.line, f"no program: name it with 'program:' (no .ffl file in {folder})")
    handlers = [folder / p for p in _strings(path, top, "handlers")]
    tests = top.get("tests")
    if not isinstance(tests, list) or not tests:
        raise _fail(path, top.lines.get("tests", top.line), "'tests' must be a list of tests")
    file = TestFile(path, programs, handlers)
    for entry in tests:
        file.cases.append(_case(path, _mapping_at(path, entry, top.lines.get("tests", 1), "a test")))
    return file


def _strings(path: Path, mapping: Located, key: str) -> list[str]:
    value = mapping.get(key)
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, str) for v in values):
        raise _fail(path, mapping.lines[key], f"'{key}' must be a file name or a list of them")
    return values


def _case(path: Path, entry: Located) -> Case:
    _check_keys(path, entry, ("name", "workflow", "inputs", "mocks", "signals", "real", "expect"), "a test")
    name = entry.get("name") or f"test at line {entry.line}"
    workflow = entry.get("workflow")
    if not isinstance(workflow, str):
        raise _fail(path, entry.line, f"{name}: 'workflow' must name the workflow to run")
    inputs = entry.get("inputs") or {}
    if not isinstance(inputs, dict):
        raise _fail(path, entry.lines["inputs"], f"{name}: 'inputs' must be a mapping of parameters")
    mocks = entry.get("mocks") or Located()
    mocks = _mapping_at(path, mocks, entry.lines.get("mocks", entry.line), f"{name}: 'mocks'")
    expect = _mapping_at(path, entry.get("expect") or Located(), entry.lines.get("expect", entry.line),
                         f"{name}: 'expect'")
    _check_keys(path, expect, ("outputs", "failure", "calls", "elapsed_seconds"), f"{name}: 'expect'")
    if "outputs" in expect and "failure" in expect:
        raise _fail(path, expect.lines["failure"], f"{name}: expect outputs or a failure, not both")
    for key in ("outputs", "failure", "calls"):
        if key in expect and not isinstance(expect[key], Located):
            raise _fail(path, expect.lines[key], f"{name}: 'expect.{key}' must be a mapping")
    if "elapsed_seconds" in expect and not isinstance(expect["elapsed_seconds"], (int, float)):
        raise _fail(path, expect.lines["elapsed_seconds"], f"{name}: 'expect.elapsed_seconds' must be a number")
    return Case(name, entry.line, workflow, dict(inputs),
                {facet: _mock(path, mocks.lines.get(facet, mocks.line), name, facet, spec)
                 for facet, spec in mocks.items()},
                _signals(path, entry, name), entry.get("real") is True, expect)


def _mock(path: Path, line: int, test: str, facet: str, spec: Any) -> Any:
    """``returns: {…}``, ``raises: {type, message}``, ``sequence: [either…]``, ``match: [{args, …}]`` or
    ``real``."""
    if spec == REAL:
        return REAL
    if not isinstance(spec, Located) or len(spec) != 1:
        raise _fail(path, line, f"{test}: mock of {facet} must be 'real' or one of returns:, raises:, sequence:")
    (kind, value), = spec.items()
    if kind == "returns":
        if not isinstance(value, dict):
            raise _fail(path, line, f"{test}: returns of {facet} must be a mapping of returns")
        return dict(value)
    if kind == "raises":
        if not isinstance(value, Located) or not isinstance(value.get("type"), str):
            raise _fail(path, line, f"{test}: raises of {facet} needs 'type' (the error type) and 'message'")
        return mocked_failure(value["type"], str(value.get("message", "")))
    if kind == "sequence" and isinstance(value, list) and value:
        return [_mock(path, getattr(item, "line", line), test, facet, item) for item in value]
    if kind == "match" and isinstance(value, list) and value:
        return _matching(path, line, test, facet, value)
    raise _fail(path, line, f"{test}: mock of {facet} must be 'real' or one of returns:, raises:, "
                "sequence:, match: (a non-empty list)")


def _matching(path: Path, line: int, test: str, facet: str, entries: list[Any]) -> Callable[[dict], Any]:
    """``match: [{args: {…}, returns|raises: …}]``: the first entry whose arguments the call has answers it
    (for concurrent steps, whose order of calls no run promises)."""
    table: list[tuple[dict[str, Any], Callable[[dict], Any]]] = []
    for entry in entries:
        where = getattr(entry, "line", line)
        if not isinstance(entry, Located) or not isinstance(entry.get("args"), dict) or len(entry) != 2:
            raise _fail(path, where, f"{test}: each match of {facet} needs 'args' and one of returns:, raises:")
        answer = Located({k: v for k, v in entry.items() if k != "args"})
        table.append((dict(entry["args"]), handler_of(facet, _mock(path, where, test, facet, answer), None)))

    def answer(args: dict[str, Any]) -> Any:
        for wanted, respond in table:
            if all(args.get(k) == v for k, v in wanted.items()):
                return respond(args)
        raise MockError(f"{facet}: no 'match' entry of its mock fits the call's arguments {args}")

    return answer


def _signals(path: Path, entry: Located, test: str) -> list[Message]:
    signals = entry.get("signals") or []
    line = entry.lines.get("signals", entry.line)
    if not isinstance(signals, list):
        raise _fail(path, line, f"{test}: 'signals' must be a list of {{name, payload, at, update}}")
    messages = []
    for item in signals:
        item = _mapping_at(path, item, line, f"{test}: a signal")
        _check_keys(path, item, ("name", "payload", "at", "update"), f"{test}: a signal")
        if not isinstance(item.get("name"), str) or not isinstance(item.get("at", 0), (int, float)):
            raise _fail(path, item.line, f"{test}: a signal needs a 'name' and, optionally, 'at' in seconds")
        messages.append(Message(item["name"], item.get("payload"), float(item.get("at", 0)),
                                item.get("update") is True))
    return messages


def check(path: Path, case: Case, result: Result) -> Iterator[Problem]:
    """Every expectation of ``case`` that ``result`` breaks, at the line that states it."""
    expect = case.expect

    def problem(key: str, text: str, within: Located | None = None) -> Problem:
        where = within if within is not None else expect
        return Problem(str(path), where.lines.get(key, where.line), case.name, text)

    if "failure" in expect:
        wanted = expect["failure"]
        if result.failure is None:
            yield problem("failure", f"expected a failure, but the run returned {result.outputs}")
        else:
            got = result.failure
            actual = {"step": got.step, "facet": got.facet, "type": got.error_type, "cause": got.cause}
            for key, value in wanted.items():
                if key not in actual:
                    yield problem(key, f"failure has no '{key}' (step, facet, type, cause)", wanted)
                elif key == "cause" and str(value) not in got.cause:
                    yield problem(key, f"failure cause {got.cause!r} does not contain {value!r}", wanted)
                elif key != "cause" and actual[key] != value:
                    yield problem(key, f"failure {key}: expected {value!r}, got {actual[key]!r} ({got})", wanted)
    elif result.failure is not None:
        yield Problem(str(path), expect.lines.get("outputs", case.line), case.name, f"the run failed: {result.failure}")
    outputs = expect.get("outputs")
    if outputs is not None and result.outputs is not None:
        for key, value in outputs.items():
            if key not in result.outputs:
                yield problem(key, f"output '{key}' missing (outputs: {sorted(result.outputs)})", outputs)
            elif result.outputs[key] != value:
                yield problem(key, f"output '{key}': expected {value!r}, got {result.outputs[key]!r}", outputs)
    calls = expect.get("calls")
    if calls is not None:
        for facet, wanted in calls.items():
            yield from _calls(problem, calls, facet, wanted, result.calls_to(facet))
    if "elapsed_seconds" in expect and result.elapsed.total_seconds() != expect["elapsed_seconds"]:
        yield problem("elapsed_seconds", f"virtual time: expected {expect['elapsed_seconds']} s, "
                      f"got {result.elapsed.total_seconds():g} s")


def _calls(problem: Callable[..., Problem], calls: Located, facet: str, wanted: Any,
           got: list[dict[str, Any]]) -> Iterator[Problem]:
    """``facet: N`` (how many calls), ``facet: [args…]`` (each call's arguments, those named, in call order)
    or ``facet: {any_order: [args…]}`` (the same, in any order: calls of concurrent steps)."""
    if isinstance(wanted, Located) and list(wanted) == ["any_order"] and isinstance(wanted["any_order"], list):
        left = list(got)
        for want in wanted["any_order"]:
            fits = next((args for args in left if all(args.get(k) == v for k, v in (want or {}).items())), None)
            if fits is None:
                yield problem(facet, f"{facet}: no call has arguments {want} (calls: {got})", calls)
                return
            left.remove(fits)
        if left:
            yield problem(facet, f"{facet}: {len(left)} calls more than expected: {left}", calls)
        return
    if isinstance(wanted, int):
        if len(got) != wanted:
            yield problem(facet, f"{facet}: expected {wanted} calls, got {len(got)}", calls)
        return
    if not isinstance(wanted, list):
        yield problem(facet, f"{facet}: expect a number of calls or a list of arguments", calls)
        return
    if len(got) != len(wanted):
        yield problem(facet, f"{facet}: expected {len(wanted)} calls, got {len(got)}: {got}", calls)
        return
    for index, (want, args) in enumerate(zip(wanted, got, strict=True)):
        for key, value in (want or {}).items():
            if args.get(key) != value:
                line_of = want if isinstance(want, Located) else calls
                yield problem(key if isinstance(want, Located) else facet,
                              f"{facet} call {index + 1}: argument '{key}': expected {value!r}, "
                              f"got {args.get(key)!r}", line_of)
