"""Virtual time for runs in memory: a timer fires as soon as nothing else in the run can make progress.

A day's ``ffl.Sleep`` then takes no real time, yet timers still fire in
deadline order with the run's other work interleaved as on a server: a
branch that sleeps an hour lets a branch that sleeps a minute go first, and
a signal sent "at 30 minutes" reaches a wait whose timeout is an hour.
"Nothing else can make progress" means no callback is ready in the event
loop and no effect (a handler in its thread, a script in its process) is
under way; ``busy()`` marks such effects.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

NEVER = datetime.max.replace(tzinfo=UTC)
"""The deadline of an action for when nothing else will ever happen (a wait nobody will answer)."""


class VirtualClock:
    """The run's ``now``, moved only by its own timers."""

    def __init__(self, start: datetime):
        self.now = start
        self._timers: list[tuple[datetime, int, Callable[[], None], asyncio.Future | None]] = []
        self._seq = itertools.count()
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._driver: asyncio.Task | None = None

    def at(self, deadline: datetime, action: Callable[[], None], waiter: asyncio.Future | None = None) -> None:
        """Call ``action`` when virtual time reaches ``deadline`` (at once, in order, if it has passed).

        A timer for ``waiter`` is dropped once the waiter is done (answered, or cancelled with its step):
        time never moves to a deadline nobody waits for.
        """
        heapq.heappush(self._timers, (deadline, next(self._seq), action, waiter))
        if self._driver is None or self._driver.done():
            self._driver = asyncio.get_running_loop().create_task(self._drive())

    async def sleep_until(self, deadline: datetime) -> None:
        future = asyncio.get_running_loop().create_future()
        self.at(deadline, lambda: future.set_result(None), future)
        await future

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(self.now + timedelta(seconds=seconds))

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Time stands still while an effect is under way (its thread or process is invisible to the loop)."""
        self._busy += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._busy -= 1
            if not self._busy:
                self._idle.set()

    def stop(self) -> None:
        """The run is over: timers still pending never fire."""
        self._timers.clear()
        if self._driver is not None:
            self._driver.cancel()

    async def _drive(self) -> None:
        loop = asyncio.get_running_loop()
        while self._timers:
            await asyncio.sleep(0)
            if self._busy:
                await self._idle.wait()
                continue
            if loop._ready:  # type: ignore[attr-defined]  # CPython's queue of runnable callbacks: work remains
                continue
            deadline, _, action, waiter = heapq.heappop(self._timers)
            if waiter is not None and waiter.done():
                continue
            if deadline is not NEVER:
                self.now = max(self.now, deadline)
            action()
