"""Virtual time for runs in memory: a timer fires as soon as nothing else in the loop can make progress.

A day's ``ffl.Sleep`` then takes no real time, yet timers still fire in
deadline order with the run's other work interleaved as on a server: a
branch that sleeps an hour lets a branch that sleeps a minute go first, and
a signal sent "at 30 minutes" reaches a wait whose timeout is an hour.
"Nothing else can make progress" means no callback is ready in the event
loop and no effect (a handler in its thread, a script in its process) is
under way; ``busy()`` marks such effects. One scheduler per event loop
serves every clock in it, so runs side by side in one loop (``gather`` of
tests) take turns instead of each waiting for the other to be idle.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

NEVER = datetime.max.replace(tzinfo=UTC)
"""The deadline of an action for when nothing else will ever happen (a wait nobody will answer)."""


class VirtualClock:
    """A run's ``now``, moved only by its own timers."""

    def __init__(self, start: datetime):
        self.now = start
        self._timers: list[tuple[datetime, int, Callable[[], None], asyncio.Future | None]] = []
        self._seq = itertools.count()

    def at(self, deadline: datetime, action: Callable[[], None], waiter: asyncio.Future | None = None) -> None:
        """Call ``action`` when virtual time reaches ``deadline`` (at once, in order, if it has passed).

        A timer for ``waiter`` is dropped once the waiter is done (answered, or cancelled with its step):
        time never moves to a deadline nobody waits for.
        """
        heapq.heappush(self._timers, (deadline, next(self._seq), action, waiter))
        _scheduler().wake(self)

    async def sleep_until(self, deadline: datetime) -> None:
        future = asyncio.get_running_loop().create_future()
        self.at(deadline, lambda: future.set_result(None), future)
        await future

    async def sleep(self, seconds: float) -> None:
        await self.sleep_until(self.now + timedelta(seconds=seconds))

    @contextmanager
    def busy(self) -> Iterator[None]:
        """Time stands still while an effect is under way (its thread or process is invisible to the loop)."""
        with _scheduler().busy():
            yield

    def stop(self) -> None:
        """The run is over: timers still pending never fire."""
        self._timers.clear()

    def next_deadline(self) -> datetime | None:
        """The earliest deadline somebody still waits for (dead timers are dropped on the way)."""
        while self._timers and self._timers[0][3] is not None and self._timers[0][3].done():
            heapq.heappop(self._timers)
        return self._timers[0][0] if self._timers else None

    def fire_next(self) -> None:
        deadline, _, action, _ = heapq.heappop(self._timers)
        if deadline is not NEVER:
            self.now = max(self.now, deadline)
        action()


class _Scheduler:
    """The event loop's one driver of virtual time: when the loop is idle, the earliest timer of any clock fires."""

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.loop = loop
        self.clocks: set[VirtualClock] = set()
        self._busy = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task | None = None

    def wake(self, clock: VirtualClock) -> None:
        self.clocks.add(clock)
        if self._task is None or self._task.done():
            self._task = self.loop.create_task(self._drive())

    @contextmanager
    def busy(self) -> Iterator[None]:
        self._busy += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._busy -= 1
            if not self._busy:
                self._idle.set()

    def _earliest(self) -> VirtualClock | None:
        due = {clock: clock.next_deadline() for clock in self.clocks}
        self.clocks = {clock for clock, deadline in due.items() if deadline is not None}
        return min(self.clocks, key=lambda clock: due[clock], default=None)  # type: ignore[arg-type,return-value]

    async def _drive(self) -> None:
        while self._earliest() is not None:
            await asyncio.sleep(0)
            if self._busy:
                await self._idle.wait()
                continue
            if self.loop._ready:  # type: ignore[attr-defined]  # CPython's queue of runnable callbacks: work remains
                continue
            clock = self._earliest()
            if clock is not None:
                clock.fire_next()


_SCHEDULERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Scheduler] = weakref.WeakKeyDictionary()


def _scheduler() -> _Scheduler:
    loop = asyncio.get_running_loop()
    scheduler = _SCHEDULERS.get(loop)
    if scheduler is None:
        scheduler = _SCHEDULERS[loop] = _Scheduler(loop)
    return scheduler
