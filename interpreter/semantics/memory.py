"""Effects in memory: the whole language without a server, for the semantics' tests and ``ffl test``.

Handlers are plain functions from the step's arguments to its returns (or
an exception, which fails the step as a handler's would on a worker: its
class name is the error type). Values cross the boundary as JSON, as they
do on Temporal, so a handler never shares an object with the run. Time is a
fake clock that a timer moves forward at once; signals are given up front,
by name, in the order a run's ``ffl.WaitForSignal`` steps take them, or sent
at chosen moments of virtual time (``Message``; virtual_time.py): a timer
or a signal's timeout passes at once, in deadline order. Given a
``RuntimeConfig``, a failing handler is retried as its retry policy says
(``ffl.Retry`` of the call, then of the facet, then the configuration), the
waits between attempts in virtual time too. Every report is kept
(``MemoryReporter.records``), so a test can assert on what ran. Nothing here
does I/O: a script runs only through the ``scripts`` function the caller
passes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from interpreter.program.builtins import SLEEP, WAIT_FOR_SIGNAL, WAIT_UNTIL
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.model import Block, Program
from interpreter.program.values import ValueProblem, dumps_checked, loads_bounded

from .builtin_args import parse_time, seconds_arg, signal_name, unknown_builtin
from .effects import BuiltinCall, FacetCall, Iterations, ScriptCall
from .failures import InvalidInput, Skipped, StepFailure
from .interpreter import Interpreter, Rules
from .scope import Write
from .snapshot import Snapshot
from .virtual_time import NEVER, VirtualClock

Handler = Callable[[dict[str, Any]], Any]
ScriptRunner = Callable[[ScriptCall], Awaitable[dict[str, Any]]]

EPOCH = datetime(2030, 1, 1, tzinfo=UTC)


def error_of(exc: BaseException) -> tuple[str, str]:
    """(message, type) of a handler's exception, as the handler activity reports it."""
    message = getattr(exc, "message", None) or str(exc) or repr(exc)
    return message, getattr(exc, "type", None) or type(exc).__name__


def retryable(exc: BaseException, retry: RetryConfig) -> bool:
    """Whether another attempt follows ``exc``: not when the handler said so (an ``ApplicationError`` with
    ``non_retryable``, a ``NonRetryableError``) or its type is in the policy's non-retryable types."""
    if getattr(exc, "non_retryable", False) or any(c.__name__ == "NonRetryableError" for c in type(exc).__mro__):
        return False
    return error_of(exc)[1] not in retry.non_retryable_error_types


def backoff(retry: RetryConfig, attempt: int) -> float:
    """Seconds before attempt ``attempt + 1``, as Temporal's retry policy computes them."""
    return min(retry.initial_interval_seconds * retry.backoff_coefficient ** (attempt - 1),
               retry.maximum_interval_seconds)


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


@dataclass(frozen=True)
class Message:
    """A signal (or, with ``update``, an update) named ``name`` sent ``at`` seconds of virtual time into the run.

    A signal nobody waits for yet is kept for the next wait on its name; an update must be taken at once by
    a step waiting then, or it is refused (as the workflow's update validator refuses it).
    """

    name: str
    payload: Any = None
    at: float = 0.0
    update: bool = False


@dataclass
class MemoryEffects:
    """Handlers by facet name, signals by name, a virtual clock; the calls each facet received, in order.

    ``retries``: the configuration whose retry policies failing handlers follow (None: one attempt each).
    ``sent``: messages delivered at moments of virtual time; ``taken`` says which step took each one,
    ``refused`` lists updates nobody was waiting for.
    """

    handlers: Mapping[str, Handler]
    signals: Mapping[str, list[Any]] = field(default_factory=dict)
    scripts: ScriptRunner | None = None
    clock: datetime = EPOCH
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (path, facet, arguments)
    retries: RuntimeConfig | None = None
    sent: list[Message] = field(default_factory=list)
    taken: list[tuple[str, Message]] = field(default_factory=list)  # (path of the wait, message)
    refused: list[Message] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.started = self.clock
        self.time = VirtualClock(self.clock)
        self._kept: dict[str, deque[Message]] = {
            name: deque(Message(name, payload) for payload in payloads) for name, payloads in self.signals.items()}
        self._waiting: dict[str, deque[tuple[str, asyncio.Future]]] = {}

    def start(self) -> None:
        """The run begins (in its event loop): the ``sent`` messages are scheduled on its clock."""
        for message in self.sent:
            self.time.at(self.started + timedelta(seconds=message.at), lambda m=message: self._deliver(m))

    def finish(self) -> None:
        """The run is over: timers stop, updates nobody took are refused, ``clock`` is the run's end."""
        self.clock = self.time.now
        self.time.stop()
        self.refused.extend(m for m in self.sent if m.update and m not in self.refused
                            and all(m is not t for _, t in self.taken))

    @property
    def elapsed(self) -> timedelta:
        """Virtual time the run took."""
        return self.time.now - self.started

    def _deliver(self, message: Message) -> None:
        waiting = self._waiting.get(message.name)
        while waiting:
            path, future = waiting.popleft()
            if not future.done():
                self.taken.append((path, message))
                future.set_result(message.payload)
                return
        if message.update:
            self.refused.append(message)
        else:
            self._kept.setdefault(message.name, deque()).append(message)

    async def call_facet(self, request: FacetCall) -> Any:
        facet = request.decl.qname
        handler = self.handlers.get(facet)
        if handler is None:
            raise StepFailure(request.path, facet, f"no handler for {facet} (registered: "
                              f"{', '.join(sorted(self.handlers)) or 'none'})", "HandlerNotFound")
        args = through_json(request.args, "arguments")
        retry = self._retry(request)
        attempt = 1
        while True:
            self.calls.append((request.path, facet, args))
            try:
                with self.time.busy():
                    result = handler(dict(args))
                    if isinstance(result, Awaitable):
                        result = await result
                break
            except Exception as exc:  # noqa: BLE001 - a handler's failure is the step's, as on a worker
                if retry is None or attempt >= retry.maximum_attempts > 0 or not retryable(exc, retry):
                    message, error_type = error_of(exc)
                    raise StepFailure(request.path, facet, message, error_type) from exc
                await self.time.sleep(backoff(retry, attempt))
                attempt += 1
        if result is None:
            return {}
        if not isinstance(result, Mapping):
            raise StepFailure(request.path, facet, f"handler returned {type(result).__name__}, expected a dict of "
                              "returns", "TypeError")
        try:
            return through_json(dict(result), "handler result")
        except ValueProblem as err:
            raise StepFailure(request.path, facet, str(err), "ValueError") from None

    def _retry(self, request: FacetCall) -> RetryConfig | None:
        """The step's retry policy: its call's ``ffl.Retry`` over its facet's over the configuration's."""
        if self.retries is None:
            return None
        retry = self.retries.retry_for(request.decl.qname)
        policy = request.step.call.policy
        policy = policy.over(request.decl.policy) if policy is not None else request.decl.policy
        return retry.model_copy(update=policy.retry_updates()) if policy is not None else retry

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        path, facet, args = request.path, request.facet, request.args
        if facet == SLEEP:
            await self.time.sleep(seconds_arg(path, facet, "seconds", args.get("seconds")) or 0)
            return {}
        if facet == WAIT_UNTIL:
            await self.time.sleep_until(parse_time(path, args.get("time")))
            return {}
        if facet == WAIT_FOR_SIGNAL:
            name = signal_name(path, args.get("name"))
            timeout = seconds_arg(path, facet, "timeout_seconds", args.get("timeout_seconds"), optional=True)
            return await self._wait(path, facet, name, timeout)
        raise unknown_builtin(path, facet)

    async def _wait(self, path: str, facet: str, name: str, timeout: float | None) -> dict[str, Any]:
        """A kept signal at once; else the first one sent while waiting; else, after ``timeout``, none."""
        kept = self._kept.get(name)
        if kept:
            message = kept.popleft()
            self.taken.append((path, message))
            return {"payload": message.payload, "timed_out": False}
        time = self.time
        future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(name, deque()).append((path, future))
        if timeout is not None:
            time.at(time.now + timedelta(seconds=timeout), lambda: future.set_result(_TIMED_OUT), future)
        else:  # fails only once nothing else can happen: no timer, no message left to send
            time.at(NEVER, lambda: future.set_exception(StepFailure(
                path, facet, f"waits for signal '{name}' without a timeout, and none is sent", "SignalNeverSent")),
                    future)
        payload = await future
        if payload is _TIMED_OUT:
            return {"payload": None, "timed_out": True}
        return {"payload": payload, "timed_out": False}

    async def script(self, request: ScriptCall) -> Any:
        if self.scripts is None:
            raise StepFailure(request.path, request.owner or "script", "scripts need a script runner",
                              "ScriptsNotAllowed")
        with self.time.busy():
            return await self.scripts(request)

    def runs_elsewhere(self, block: Block, count: int) -> bool:
        return False

    async def iterations(self, request: Iterations) -> list[list[Write]]:
        raise AssertionError("in memory, every foreach runs in the run itself")


_TIMED_OUT = object()


@dataclass
class MemoryRun:
    """A run's outcome in memory: its returns, or the failure (StepFailure, Skipped, InvalidInput) that ended it."""

    returns: dict[str, Any] | None
    failure: Exception | None
    effects: MemoryEffects
    reporter: MemoryReporter


async def run_in_memory(program: Program, workflow: str, inputs: Mapping[str, Any], effects: MemoryEffects,
                        rules: Rules | None = None, snapshot: Snapshot | None = None) -> MemoryRun:
    """Run ``workflow`` of ``program`` with ``inputs`` against ``effects``; never raises on a run's failure.

    With ``snapshot``, what it holds is restored, and what completes is recorded in it."""
    reporter = MemoryReporter()
    decl = program.facets.get(workflow)
    if decl is None or decl.kind != "workflow":
        return MemoryRun(None, InvalidInput(f"the program has no workflow '{workflow}'"), effects, reporter)
    interpreter = Interpreter(program, effects, reporter, rules or Rules(), snapshot)
    effects.start()
    try:
        params = interpreter.workflow_params(decl, through_json(dict(inputs), "inputs"))
        returns = await interpreter.run_workflow(decl, params)
    except (StepFailure, Skipped, InvalidInput) as failure:
        return MemoryRun(None, failure, effects, reporter)
    finally:
        effects.finish()
    return MemoryRun(returns, None, effects, reporter)
