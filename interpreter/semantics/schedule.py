"""Incremental scheduling: start work only when it can run, so no step of the loop does work proportional
to the whole graph.

- ``dataflow`` starts a block's step once the steps of the same block it
  references have finished: a 5,000-step block costs a counter per reference
  up front, and each completion wakes only its dependents.
- ``windowed`` runs foreach iterations with at most ``width`` in flight,
  starting the next one as one finishes.
- ``gather_all`` runs sibling blocks (or when cases) together.

All three are deterministic on a deterministic event loop (Temporal's):
tasks start in the order their prerequisites complete. They let everything
started finish, then raise the failure to report; results keep source order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

from interpreter.program.model import Step

from .failures import first_failure

FOREACH_WINDOW = 256
"""Iterations of one foreach in flight at once (at least; a run widens it to its activity limit):
a 5,000-element foreach starts with a few dozen milliseconds of work instead of all of it."""


async def settle(coro: Awaitable[Any]) -> Any:
    """The coroutine's result, or the exception it ended with (as gather(return_exceptions=True))."""
    try:
        return await coro
    except BaseException as err:  # noqa: BLE001 - reported through first_failure
        return err


async def wait_all(tasks: Sequence[asyncio.Future]) -> None:
    """Wait until every task has finished, registering in list order (``asyncio.wait`` iterates a set)."""
    waiter = asyncio.get_running_loop().create_future()
    remaining = len(tasks)

    def finished(_: asyncio.Future) -> None:
        nonlocal remaining
        remaining -= 1
        if remaining <= 0 and not waiter.done():
            waiter.set_result(None)

    for task in tasks:
        task.add_done_callback(finished)
    try:
        await waiter
    finally:
        for task in tasks:
            task.remove_done_callback(finished)


class _Runner:
    """Tasks started on demand, awaited together; cancelling the waiter cancels them.

    With ``settle_on_cancel`` a cancelled waiter also waits until every started
    task has finished (each step's cleanup) before it goes on.
    """

    def __init__(self, count: int, settle_on_cancel: bool = False):
        self.settle_on_cancel = settle_on_cancel
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
            self.results[index] = await settle(coro)
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
            if self.settle_on_cancel and started:
                await wait_all(started)
            raise
        failure = first_failure(self.results)
        if failure is not None:
            raise failure
        return self.results


async def dataflow(steps: Sequence[Step], run: Callable[[int], Coroutine[Any, Any, Any]], *,
                   settle_on_cancel: bool = False) -> list[Any]:
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
    runner = _Runner(len(steps), settle_on_cancel)

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
                   settle_on_cancel: bool = False) -> list[Any]:
    """``run(i)`` for ``i`` in ``range(count)`` with at most ``width`` in flight; results by index."""
    runner = _Runner(count, settle_on_cancel)
    following = iter(range(min(width, count), count))

    def next_one(_: int) -> None:
        index = next(following, None)
        if index is not None:
            runner.start(index, run(index), next_one)

    for index in range(min(width, count)):
        runner.start(index, run(index), next_one)
    return await runner.wait()


async def gather_all(coros: list) -> list[Any]:
    """Run coroutines concurrently, let every one finish, then raise the failure to report."""
    if len(coros) == 1:
        results = [await _capture(coros[0])]
    else:
        results = await asyncio.gather(*coros, return_exceptions=True)
    failure = first_failure(results)
    if failure is not None:
        raise failure
    return results


async def _capture(coro) -> Any:
    try:
        return await coro
    except Exception as err:  # noqa: BLE001 - handed to first_failure like gather would
        return err
