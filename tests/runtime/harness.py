"""Run FFL text end to end on the real dev server: compile, publish, serve, execute.

``run_ffl`` compiles sources, publishes them into a LocalProgramStore under a
temporary directory, runs in-process workers — one for the interpreter queue
(FFLWorkflow + its activities) and one serving the handlers — starts the
workflow and returns an ``FFLRun`` with its result or failure. Every event
facet's namespace queue is remapped to a queue unique to the run, so tests
never steal each other's tasks.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.activities.run_header import worker_interceptors
from interpreter.cli.run_view import query_all_steps
from interpreter.compiler import compile_sources
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.model import Program
from interpreter.workflows import FFLWorkflow, workflow_runner

FAST_RETRY = RetryConfig(maximum_attempts=1, initial_interval_seconds=0.1, backoff_coefficient=1.0,
                         maximum_interval_seconds=0.1, start_to_close_seconds=10.0)


@dataclass
class FFLRun:
    """Outcome of one run: ``result`` on success, ``error`` (the failure) otherwise."""

    handle: WorkflowHandle
    result: dict[str, Any] | None = None
    error: WorkflowFailureError | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    inspected: Any = None

    @property
    def message(self) -> str:
        """The failure's message and its cause's, for assertions."""
        if self.error is None:
            return ""
        cause = self.error.cause
        parts = [str(self.error)]
        while cause is not None:
            parts.append(getattr(cause, "message", str(cause)))
            parts.append(str(getattr(cause, "type", "") or ""))
            cause = cause.__cause__
        return " | ".join(parts)

    @property
    def error_type(self) -> str | None:
        cause = self.error.cause if self.error else None
        return getattr(cause, "type", None)


def compile_text(sources: str | Mapping[str, str]) -> Program:
    if isinstance(sources, str):
        sources = {"main.ffl": sources}
    return compile_sources(sorted(sources.items()))


def registry_of(handlers: Mapping[str, Callable] | Callable | None) -> HandlerRegistry:
    """A registry from ``{"ns.Facet": fn}``, a ``register_handlers(registry)`` function or a registry."""
    if isinstance(handlers, HandlerRegistry):
        return handlers
    registry = HandlerRegistry()
    if handlers is None:
        return registry
    if callable(handlers):
        handlers(registry)
        return registry
    for name, fn in handlers.items():
        registry.register(name, fn)
    return registry


def isolated_config(program: Program, queue: str, base: RuntimeConfig | None = None) -> RuntimeConfig:
    """``base`` (fast retries by default) with every event or prompt facet routed to ``queue``."""
    config = (base or RuntimeConfig(retry=FAST_RETRY)).model_copy(deep=True)
    for name, decl in program.facets.items():
        if decl.kind == "event" or decl.prompt is not None:
            config.queues.setdefault(name, queue)
    return config


async def run_ffl(client: Client, sources: str | Mapping[str, str] | Program, workflow: str,
                  inputs: Mapping[str, Any] | None = None, *, handlers: Any = None, tmp_path: Path,
                  config: RuntimeConfig | None = None, task_queue: str | None = None,
                  timeout: float = 20.0, memo: Mapping[str, Any] | None = None,
                  keep_queues: bool = False, mirror: object | None = None,
                  handler_slots: int | None = None, local: bool = False,
                  inspect: Callable[[WorkflowHandle], Awaitable[Any]] | None = None) -> FFLRun:
    """Compile, publish and run ``workflow`` with ``inputs``; never raises on workflow failure.

    ``handler_slots`` sets the handler worker's concurrent activities (the SDK's default is 100);
    ``local`` has the interpreter worker serve the handlers too, as local activities (as ``ffl run`` does);
    ``inspect(handle)`` runs once the run ended, while the workers still answer queries
    (its result in ``FFLRun.inspected``).
    """
    program = sources if isinstance(sources, Program) else compile_text(sources)
    queue = task_queue or "ffl-" + uuid.uuid4().hex[:10]
    handler_queue = queue + "-handlers"
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    if not keep_queues:
        config = isolated_config(program, handler_queue, config)
    config = config or RuntimeConfig(retry=FAST_RETRY)
    registry = registry_of(handlers)
    served: list = []
    if local:
        config = config.model_copy(update={"local_facets": registry.names()})
        served = [build_handler_activity(registry, queue)]
    header = worker_interceptors(client)
    interpreter = Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config, mirror, allow_scripts=True) + served,
                         interceptors=header)
    handler_worker = Worker(client, task_queue=handler_queue, activities=[build_handler_activity(registry, handler_queue)],
                            interceptors=header,
                            max_concurrent_activities=handler_slots, **handler_worker_options())
    async with interpreter, handler_worker:
        handle = await client.start_workflow(workflow, dict(inputs) if inputs is not None else {},
                                             id="wf-" + uuid.uuid4().hex[:12], task_queue=queue,
                                             execution_timeout=None, memo=dict(memo) if memo else None)
        run = FFLRun(handle=handle)
        try:
            run.result = await asyncio.wait_for(handle.result(), timeout)
        except WorkflowFailureError as err:
            run.error = err
        run.steps = await query_all_steps(handle)
        if inspect is not None:
            run.inspected = await inspect(handle)
    return run



async def handler_spans(handle: WorkflowHandle, facet: str) -> dict[str, tuple[float, float]]:
    """From the run's history: when each activity of ``facet`` (by id) started and completed, as the server
    recorded it — concurrency read from the history, not from the test's clock."""
    from temporalio.api.enums.v1 import EventType

    history = await handle.fetch_history()
    ids: dict[int, str] = {}
    began: dict[str, float] = {}
    spans: dict[str, tuple[float, float]] = {}
    for event in history.events:
        when = event.event_time.ToNanoseconds() / 1e9
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == facet:
                ids[event.event_id] = attrs.activity_id
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            activity = ids.get(event.activity_task_started_event_attributes.scheduled_event_id)
            if activity is not None:
                began[activity] = when
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
            activity = ids.get(event.activity_task_completed_event_attributes.scheduled_event_id)
            if activity is not None:
                spans[activity] = (began[activity], when)
    return spans


def most_at_once(spans: dict[str, tuple[float, float]]) -> int:
    """The most spans that were open at one instant."""
    edges = sorted([(start, 1) for start, _ in spans.values()] + [(end, -1) for _, end in spans.values()])
    most = current = 0
    for _, step in edges:
        current += step
        most = max(most, current)
    return most


@dataclass
class ActivityRecord:
    """One activity as the run's history holds it: its scheduling (options included), its last attempt's start
    (``attempt``, ``last_failure``) and how it closed, with the server's times in seconds."""

    scheduled: Any
    scheduled_at: float
    started: Any = None
    started_at: float | None = None
    closed: str = ""  # completed, failed, timed_out or canceled
    closed_at: float | None = None


async def activity_records(handle: WorkflowHandle, activity_type: str) -> list[ActivityRecord]:
    """The run's activities of ``activity_type``, in the order they were scheduled, read from its history."""
    from temporalio.api.enums.v1 import EventType

    closing = {EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: ("completed", "activity_task_completed"),
               EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: ("failed", "activity_task_failed"),
               EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: ("timed_out", "activity_task_timed_out"),
               EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: ("canceled", "activity_task_canceled")}  # fmt: skip
    records: dict[int, ActivityRecord] = {}
    for event in (await handle.fetch_history()).events:
        when = event.event_time.ToNanoseconds() / 1e9
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attrs = event.activity_task_scheduled_event_attributes
            if attrs.activity_type.name == activity_type:
                records[event.event_id] = ActivityRecord(attrs, when)
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            record = records.get(event.activity_task_started_event_attributes.scheduled_event_id)
            if record is not None:
                record.started, record.started_at = event.activity_task_started_event_attributes, when
        elif event.event_type in closing:
            state, field = closing[event.event_type]
            record = records.get(getattr(event, f"{field}_event_attributes").scheduled_event_id)
            if record is not None:
                record.closed, record.closed_at = state, when
    return list(records.values())
