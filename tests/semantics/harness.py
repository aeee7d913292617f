"""Run FFL in memory: the language's interpreter against in-memory effects, with a folder's real handlers.

The same handlers a worker would serve (a ``HandlerRegistry``), called with the step's arguments; scripts
run in their own process as RunScript would run them. No server: a conformance case takes milliseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from interpreter.activities.handlers import HandlerRegistry, is_async_handler
from interpreter.program.model import Program
from interpreter.semantics.memory import MemoryEffects, MemoryRun, run_in_memory
from interpreter.testing.scripts import script_runner


def in_thread(fn):
    """A plain handler runs in a thread of its own, as the handler activity runs it: steps that must meet
    (tests/conformance/valid/concurrency) do."""
    if is_async_handler(fn):
        return fn

    async def call(args: dict[str, Any]) -> Any:
        return await asyncio.to_thread(fn, args)

    return call


async def run_memory(program: Program, workflow: str, inputs: Mapping[str, Any], registry: HandlerRegistry,
                     signals: Mapping[str, list[Any]] | None = None) -> MemoryRun:
    handlers = {name: in_thread(registry.registration(name).fn) for name in registry.names()}
    effects = MemoryEffects(handlers, signals=dict(signals or {}), scripts=script_runner(program))
    return await run_in_memory(program, workflow, inputs, effects)


def failure_text(run: MemoryRun) -> str | None:
    """The run's failure as the run's failure message reads on Temporal (for the suite's expectations)."""
    if run.failure is None:
        return None
    error_type = getattr(run.failure, "error_type", type(run.failure).__name__)
    return f"{run.failure} | {error_type}"
