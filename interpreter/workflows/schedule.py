"""Incremental scheduling: start work only when it can run, so no workflow task does work
proportional to the whole graph.

- ``dataflow`` starts a block's step once the steps of the same block it
  references have finished: a 5,000-step block costs a counter per reference
  up front, and each completion wakes only its dependents.
- ``windowed`` runs foreach iterations with at most ``width`` in flight,
  starting the next one as one finishes.
- ``Admission`` (admission.py) decides when each activity may start.

All three are deterministic under Temporal: tasks start in the order their
prerequisites complete, which replay reproduces from history. Like
``gather_all`` they let everything started finish, then raise the failure to
report; results keep source order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from interpreter.program.model import Step

from .state import first_failure

FOREACH_WINDOW = 256
"""Iterations of one foreach in flight at once (at least; the interpreter widens it to
the run's activity limit): a 5,000-element foreach starts with a few dozen
milliseconds of work instead of all of it."""


async def _settle(coro: Awaitable[Any]) -> Any:
    """The coroutine's result, or the exception it ended with (as gather(return_exceptions=True))."""
    try:
        return await coro
    except BaseException as err:  # noqa: BLE001 - reported through first_failure
        return err


class _Runner:
    """Tasks started on demand, awaited together; cancelling the waiter cancels them.

    With ``settle`` a cancelled waiter also waits until every started task has
    finished (each step's cleanup, see cancellation.py) before it goes on.
    """

    def __init__(self, count: int, settle: bool = False):
        self.settle = settle
        self.results: list[Any] = [None] * count
        self.remaining = count
        self.tasks: dict[int, asyncio.Task] = {}
        self.stopped = False
        self.done = asyncio.get_running_loop().create_future()
        if count == 0:
            self.done.set_result(None)

    def start(self, index: int, coro: Coroutine[Any, Any, Any], then: Callable[[int], None]) -> None:
        if self.stopped:  # cancelled: start nothing more
            coro.close()
            return

        async def run() -> None:
            self.results[index] = await _settle(coro)
            del self.tasks[index]
            then(index)
            self.remaining -= 1
            if self.remaining == 0 and not self.done.done():
                self.done.set_result(None)

        self.tasks[index] = asyncio.create_task(run())

    async def wait(self) -> list[Any]:
        try:
            await self.done
        except asyncio.CancelledError:
            self.stopped = True
            started = list(self.tasks.values())
            for task in started:
                task.cancel()
            if self.settle and started:
                await workflow.wait(started)  # in start order (asyncio.wait returns sets)
            raise
        failure = first_failure(self.results)
        if failure is not None:
            raise failure
        return self.results


async def dataflow(steps: Sequence[Step], run: Callable[[int], Coroutine[Any, Any, Any]], *,
                   settle: bool = False) -> list[Any]:
    """``run(i)`` for every step, each started once its block-local references have finished.

    References to steps outside the block are awaited by the step itself (they
    are usually done already). A failed step still releases its dependents,
    which then see the failure and skip, exactly as if they had been waiting.
    """
    position = {step.name: index for index, step in enumerate(steps)}
    waiting = [0] * len(steps)
    dependents: list[list[int]] = [[] for _ in steps]
    for index, step in enumerate(steps):
        for ref in dict.fromkeys(step.refs):
            source = position.get(ref)
            if source is not None and source != index:
                waiting[index] += 1
                dependents[source].append(index)
    runner = _Runner(len(steps), settle)

    def release(index: int) -> None:
        for dependent in dependents[index]:
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                runner.start(dependent, run(dependent), release)

    for index in range(len(steps)):
        if waiting[index] == 0:
            runner.start(index, run(index), release)
    return await runner.wait()


async def windowed(count: int, run: Callable[[int], Coroutine[Any, Any, Any]], width: int = FOREACH_WINDOW, *,
                   settle: bool = False) -> list[Any]:
    """``run(i)`` for ``i`` in ``range(count)`` with at most ``width`` in flight; results by index."""
    runner = _Runner(count, settle)
    following = iter(range(min(width, count), count))

    def next_one(_: int) -> None:
        index = next(following, None)
        if index is not None:
            runner.start(index, run(index), next_one)

    for index in range(min(width, count)):
        runner.start(index, run(index), next_one)
    return await runner.wait()
