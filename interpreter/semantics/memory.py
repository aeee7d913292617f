"""Effects in memory: the whole language without a server, for the semantics' tests and ``ffl test``.

Handlers are plain functions from the step's arguments to its returns (or
an exception, which fails the step as a handler's would on a worker: its
class name is the error type). Values cross the boundary as JSON, as they
do on Temporal, so a handler never shares an object with the run. Time is a
fake clock that a timer moves forward at once; signals are given up front,
by name, in the order a run's ``ffl.WaitForSignal`` steps take them. Every
report is kept (``MemoryReporter.records``), so a test can assert on what
ran. Nothing here does I/O: a script runs only through the ``scripts``
function the caller passes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from interpreter.program.builtins import SLEEP, WAIT_FOR_SIGNAL, WAIT_UNTIL
from interpreter.program.model import Block, Program
from interpreter.program.values import ValueProblem, dumps_checked, input_problems, loads_bounded

from .builtin_args import parse_time, seconds_arg, signal_name, unknown_builtin
from .effects import BuiltinCall, FacetCall, Iterations, ScriptCall
from .failures import InvalidInput, Skipped, StepFailure
from .interpreter import Interpreter, Rules
from .scope import Write

Handler = Callable[[dict[str, Any]], Any]
ScriptRunner = Callable[[ScriptCall], Awaitable[dict[str, Any]]]

EPOCH = datetime(2030, 1, 1, tzinfo=UTC)


def error_of(exc: BaseException) -> tuple[str, str]:
    """(message, type) of a handler's exception, as the handler activity reports it."""
    message = getattr(exc, "message", None) or str(exc) or repr(exc)
    return message, getattr(exc, "type", None) or type(exc).__name__


def through_json(value: Any, what: str) -> Any:
    """``value`` as the other side of a Temporal payload receives it (a copy, JSON types only)."""
    try:
        return loads_bounded(dumps_checked(value, default=_no_json))
    except (ValueProblem, TypeError, ValueError) as err:
        raise ValueProblem(f"{what} cannot be encoded as JSON: {err}") from None


def _no_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} has no JSON form")


@dataclass
class MemoryReporter:
    """Every step and block state, in the order they were reached, and the run's log."""

    records: list[tuple[str, str, str]] = field(default_factory=list)  # (path, facet or block type, state)
    logs: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)

    def step(self, path: str, facet: str, state: str, **_: Any) -> None:
        self.records.append((path, facet, state))

    def block(self, path: str, object_type: str, state: str, **_: Any) -> None:
        self.records.append((path, object_type, state))

    def log(self, path: str, message: str) -> None:
        self.logs.append((path, message))

    def warn(self, path: str, message: str) -> None:
        self.warnings.append((path, message))

    def states(self, path: str) -> list[str]:
        return [state for where, _, state in self.records if where == path]


@dataclass
class MemoryEffects:
    """Handlers by facet name, signals by name, a fake clock; the calls each facet received, in order."""

    handlers: Mapping[str, Handler]
    signals: Mapping[str, list[Any]] = field(default_factory=dict)
    scripts: ScriptRunner | None = None
    clock: datetime = EPOCH
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (path, facet, arguments)

    def __post_init__(self) -> None:
        self._signals = {name: deque(payloads) for name, payloads in self.signals.items()}

    async def call_facet(self, request: FacetCall) -> Any:
        facet = request.decl.qname
        handler = self.handlers.get(facet)
        if handler is None:
            raise StepFailure(request.path, facet, f"no handler for {facet} (registered: "
                              f"{', '.join(sorted(self.handlers)) or 'none'})", "HandlerNotFound")
        args = through_json(request.args, "arguments")
        self.calls.append((request.path, facet, args))
        try:
            result = handler(args)
            if isinstance(result, Awaitable):
                result = await result
        except Exception as exc:  # noqa: BLE001 - a handler's failure is the step's, as on a worker
            message, error_type = error_of(exc)
            raise StepFailure(request.path, facet, message, error_type) from exc
        if result is None:
            return {}
        if not isinstance(result, Mapping):
            raise StepFailure(request.path, facet, f"handler returned {type(result).__name__}, expected a dict of "
                              "returns", "TypeError")
        try:
            return through_json(dict(result), "handler result")
        except ValueProblem as err:
            raise StepFailure(request.path, facet, str(err), "ValueError") from None

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        path, facet, args = request.path, request.facet, request.args
        if facet == SLEEP:
            self.clock += timedelta(seconds=seconds_arg(path, facet, "seconds", args.get("seconds")) or 0)
            return {}
        if facet == WAIT_UNTIL:
            self.clock = max(self.clock, parse_time(path, args.get("time")))
            return {}
        if facet == WAIT_FOR_SIGNAL:
            name = signal_name(path, args.get("name"))
            timeout = seconds_arg(path, facet, "timeout_seconds", args.get("timeout_seconds"), optional=True)
            box = self._signals.get(name)
            if box:
                return {"payload": box.popleft(), "timed_out": False}
            if timeout is None:
                raise StepFailure(path, facet, f"waits for signal '{name}' without a timeout, and none is sent",
                                  "SignalNeverSent")
            self.clock += timedelta(seconds=timeout)
            return {"payload": None, "timed_out": True}
        raise unknown_builtin(path, facet)

    async def script(self, request: ScriptCall) -> Any:
        if self.scripts is None:
            raise StepFailure(request.path, request.owner or "script", "scripts need a script runner",
                              "ScriptsNotAllowed")
        return await self.scripts(request)

    def runs_elsewhere(self, block: Block, count: int) -> bool:
        return False

    async def iterations(self, request: Iterations) -> list[list[Write]]:
        raise AssertionError("in memory, every foreach runs in the run itself")


@dataclass
class MemoryRun:
    """A run's outcome in memory: its returns, or the failure (StepFailure, Skipped, InvalidInput) that ended it."""

    returns: dict[str, Any] | None
    failure: Exception | None
    effects: MemoryEffects
    reporter: MemoryReporter


async def run_in_memory(program: Program, workflow: str, inputs: Mapping[str, Any], effects: MemoryEffects,
                        rules: Rules | None = None) -> MemoryRun:
    """Run ``workflow`` of ``program`` with ``inputs`` against ``effects``; never raises on a run's failure."""
    reporter = MemoryReporter()
    decl = program.facets.get(workflow)
    if decl is None or decl.kind != "workflow":
        return MemoryRun(None, InvalidInput(f"the program has no workflow '{workflow}'"), effects, reporter)
    interpreter = Interpreter(program, effects, reporter, rules or Rules())
    try:
        params = interpreter.workflow_params(decl, through_json(dict(inputs), "inputs"))
        problems = input_problems(program, decl, params, interpreter.rules.integral_doubles)
        if problems and interpreter.rules.type_checks == "warn":
            reporter.warn("", f"workflow '{decl.qname}': " + "; ".join(problems) + " (passed on: type_checks is warn)")
        elif problems:
            raise InvalidInput(f"workflow '{decl.qname}': " + "; ".join(problems))
        returns = await interpreter.run_workflow(decl, params)
    except (StepFailure, Skipped, InvalidInput) as failure:
        return MemoryRun(None, failure, effects, reporter)
    return MemoryRun(returns, None, effects, reporter)
