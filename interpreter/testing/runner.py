"""Run a workflow of an FFL program as a test: facets mocked, time virtual, signals sent at chosen moments.

``Tester`` compiles the program once and runs it in memory (the language's
own interpreter against interpreter/semantics/memory.py), so a run takes
milliseconds; ``Result`` holds what a test asserts on: the outputs, the
failure (step path, facet, cause), the calls every facet received in order,
and the virtual time the run took. Every run adds to the tester's coverage.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from interpreter.activities.handlers import HandlerRegistry, is_async_handler, load_handlers
from interpreter.compiler import compile_files
from interpreter.program.config import RuntimeConfig
from interpreter.program.model import Program
from interpreter.semantics import InvalidInput, StepFailure
from interpreter.semantics.memory import MemoryEffects, Message, run_in_memory

from .coverage import Coverage
from .mocks import REAL, Handler, MockError, handler_of, unmocked
from .scripts import script_runner

_FAILED = re.compile(r"step '(?P<step>[^']*)' \((?P<facet>[^)]*)\) failed: (?P<type>[\w.]+): (?P<cause>.*)", re.S)


def signal(name: str, payload: Any = None, at: float = 0.0) -> Message:
    """A signal sent ``at`` seconds of virtual time into the run (kept until a step waits for it)."""
    return Message(name, payload, at)


def update(name: str, payload: Any = None, at: float = 0.0) -> Message:
    """An update sent ``at`` seconds into the run: refused unless a step waits for ``name`` then."""
    return Message(name, payload, at, update=True)


@dataclass(frozen=True)
class Failure:
    """Why a run failed: the innermost failing step's path and facet, the error type and its cause."""

    step: str
    facet: str
    error_type: str
    cause: str

    @classmethod
    def of(cls, message: str, error_type: str) -> Failure:
        """From a run's failure message (``step 'b0/s' (calc.Add) failed: ValueError: …``), as both the
        in-memory run and Temporal phrase it."""
        found = _FAILED.match(message)
        if found is None:
            return cls("", "", error_type, message)
        cause = found.group("cause").split("\n  in step '")[0]
        return cls(found.group("step"), found.group("facet"), found.group("type"), cause)

    def __str__(self) -> str:
        where = f"step '{self.step}' ({self.facet}) failed: " if self.step else ""
        return f"{where}{self.error_type}: {self.cause}"


@dataclass(frozen=True)
class Called:
    """One call of an event facet: its arguments, and the path of the step that made it."""

    facet: str
    args: dict[str, Any]
    path: str


@dataclass
class Result:
    outputs: dict[str, Any] | None
    failure: Failure | None
    calls: list[Called]
    elapsed: timedelta
    signals_taken: list[tuple[str, str]] = field(default_factory=list)  # (path of the wait, signal name)
    refused: list[str] = field(default_factory=list)  # names of updates nobody waited for
    logs: list[str] = field(default_factory=list)  # real handlers' _step_log lines, the run's log and warnings

    @property
    def ok(self) -> bool:
        return self.failure is None

    def calls_to(self, facet: str) -> list[dict[str, Any]]:
        """The arguments of every call of ``facet``, in call order (a retry is a call too)."""
        return [call.args for call in self.calls if call.facet == facet]


class StepLog:
    """``payload["_step_log"]`` for a real handler under test: its lines go to ``Result.logs``."""

    def __init__(self, facet: str, lines: list[str]):
        self.facet, self.lines = facet, lines

    def __call__(self, message: Any, level: str = "info", details: Any = None) -> None:
        self.lines.append(f"{self.facet}: {message}")

    def append(self, entry: Mapping[str, Any]) -> None:
        self(entry.get("message", ""))


def as_messages(signals: Iterable[Message] | Mapping[str, Any] | None) -> list[Message]:
    """Signals as a test gives them: messages, or ``{name: payload}`` sent at the start."""
    if signals is None:
        return []
    if isinstance(signals, Mapping):
        return [Message(name, payload) for name, payload in signals.items()]
    return list(signals)


class Tester:
    """One FFL program, compiled once, and the handler files whose handlers a test may call for real."""

    __test__ = False  # not a pytest test class, though its name starts with Test

    def __init__(self, paths: Sequence[str | Path] | Program, handlers: Sequence[str | Path] = (),
                 coverage: Coverage | None = None, config: RuntimeConfig | None = None):
        """``config``'s retry policies apply to failing handlers (the worker's defaults unless given)."""
        self.config = config if config is not None else RuntimeConfig()
        self.program = paths if isinstance(paths, Program) else compile_files([str(p) for p in paths])
        self.registry: HandlerRegistry | None = load_handlers([str(h) for h in handlers]) if handlers else None
        self.coverage = coverage if coverage is not None else Coverage()
        self.coverage.add_program(self.program)
        self._script = script_runner(self.program)

    def event_facets(self) -> list[str]:
        return sorted(n for n, d in self.program.facets.items() if d.kind == "event" or d.prompt is not None)

    def handlers(self, mocks: Mapping[str, Any], real: bool, logs: list[str]) -> dict[str, Handler]:
        """A handler for every event facet: its mock, its real handler (``REAL``, or all with ``real``), or a
        refusal that names it."""
        facets = self.event_facets()
        unknown = sorted(set(mocks) - set(facets))
        if unknown:
            raise MockError(f"mocks name {', '.join(unknown)}, not an event facet of the program "
                            f"(event facets: {', '.join(facets) or 'none'})")
        chosen: dict[str, Handler] = {}
        for facet in facets:
            mock = mocks.get(facet, REAL if real else None)
            if mock is None:
                chosen[facet] = unmocked(facet, list(mocks))
            elif isinstance(mock, str) and mock == REAL:
                chosen[facet] = self._real(facet, handler_of(facet, REAL, self.registry), logs)
            else:
                chosen[facet] = handler_of(facet, mock, None)
        return chosen

    @staticmethod
    def _real(facet: str, fn: Handler, logs: list[str]) -> Handler:
        """A real handler gets the payload keys a worker adds; a plain one runs in a thread, as on a worker."""
        def extras(args: dict[str, Any]) -> dict[str, Any]:
            return {**args, "_facet_name": facet, "_step_log": StepLog(facet, logs), "_retry_count": 0,
                    "_is_retry": False, "_task_heartbeat": lambda *a, **k: None}

        if is_async_handler(fn):
            return lambda args: fn(extras(args))
        return lambda args: asyncio.to_thread(fn, extras(args))

    async def arun(self, workflow: str, inputs: Mapping[str, Any] | None = None, *,
                   mocks: Mapping[str, Any] | None = None,
                   signals: Iterable[Message] | Mapping[str, Any] | None = None, real: bool = False) -> Result:
        """Run ``workflow`` with ``inputs`` in memory; raises MockError when the test's mocks are wrong."""
        logs: list[str] = []
        effects = MemoryEffects(self.handlers(dict(mocks or {}), real, logs), scripts=self._script,
                                retries=self.config, sent=as_messages(signals))
        try:
            run = await run_in_memory(self.program, workflow, dict(inputs or {}), effects)
        except MockError as err:
            raise MockError(str(err)) from None  # the test's mistake: its message, not the interpreter's stack
        self.coverage.reached(self.program, workflow,
                              [path for path, _, state in run.reporter.records if state == "running"])
        return Result(run.returns, failure_of(run.failure), [Called(f, a, p) for p, f, a in effects.calls],
                      effects.elapsed, [(path, m.name) for path, m in effects.taken],
                      [m.name for m in effects.refused],
                      logs + [f"{p}: {m}" for p, m in run.reporter.logs]
                      + [f"{p}: warning: {m}" for p, m in run.reporter.warnings])

    def run(self, workflow: str, inputs: Mapping[str, Any] | None = None, **options: Any) -> Result:
        """``arun`` for a test that is not a coroutine."""
        return asyncio.run(self.arun(workflow, inputs, **options))


def failure_of(failure: Exception | None) -> Failure | None:
    if failure is None:
        return None
    if isinstance(failure, StepFailure):
        return Failure(failure.path, failure.facet, failure.error_type, failure.cause)
    error_type = "InvalidParameters" if isinstance(failure, InvalidInput) else "Skipped"
    return Failure("", "", error_type, str(failure))
