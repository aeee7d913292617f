"""Runs that are steered while they run: start one, watch its steps, then signal, complete or cancel it.

``served`` publishes a program and runs its workers (interpreter and
handlers, as ``run_ffl`` does) for the body of an ``async with``; ``start``
then begins a run and returns its handle. ``wait_for_step`` polls the steps
query until a step reaches a state (or a built-in step waits), so a test
acts only once the run is where it wants it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.activities.run_header import worker_interceptors
from interpreter.program.config import RuntimeConfig
from interpreter.workflows import FFLWorkflow, workflow_runner

from .harness import FAST_RETRY, compile_text, isolated_config, registry_of


@dataclass
class Served:
    client: Client
    queue: str
    handler_queue: str

    async def start(self, workflow: str, inputs: dict[str, Any] | None = None) -> WorkflowHandle:
        return await self.client.start_workflow(workflow, inputs or {}, id="wf-" + uuid.uuid4().hex[:12],
                                                task_queue=self.queue)


@contextlib.asynccontextmanager
async def served(client: Client, source: str, tmp_path: Path, handlers: Any = None,
                 config: RuntimeConfig | None = None, mirror: object | None = None,
                 extra_queues: tuple[str, ...] = ()) -> AsyncIterator[Served]:
    """Workers for ``source`` on fresh queues; ``extra_queues`` are served with the same handlers too."""
    program = compile_text(source)
    queue = "ffl-" + uuid.uuid4().hex[:10]
    handler_queue = queue + "-h"
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    config = isolated_config(program, handler_queue, config or RuntimeConfig(retry=FAST_RETRY))
    registry = registry_of(handlers)
    header = worker_interceptors(client)
    workers = [Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                      activities=build_interpreter_activities(store, config, mirror), interceptors=header)]
    for served_queue in (handler_queue, *extra_queues):
        workers.append(Worker(client, task_queue=served_queue, interceptors=header,
                              activities=[build_handler_activity(registry, served_queue)], **handler_worker_options()))
    async with contextlib.AsyncExitStack() as stack:
        for worker in workers:
            await stack.enter_async_context(worker)
        yield Served(client, queue, handler_queue)


async def steps_of(handle: WorkflowHandle) -> dict[str, dict[str, Any]]:
    return {record["path"]: record for record in await handle.query("steps")}


async def wait_for_step(handle: WorkflowHandle, path: str, until: Callable[[dict[str, Any]], bool],
                        timeout: float = 20.0) -> dict[str, Any]:
    """The step's record once ``until(record)`` holds; fails the test naming what it saw."""
    deadline = time.monotonic() + timeout
    seen: dict[str, Any] | None = None
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):  # the first workflow task may not have run yet
            seen = (await steps_of(handle)).get(path)
            if seen is not None and until(seen):
                return seen
        await asyncio.sleep(0.1)
    raise AssertionError(f"step {path} never got there within {timeout} s; last seen: {seen}")


def waiting(record: dict[str, Any]) -> bool:
    return record.get("state") == "running" and bool(record.get("waiting"))
