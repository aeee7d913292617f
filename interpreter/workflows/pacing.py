"""Pacing of activities: a run's width is configuration, its pace follows what its tasks absorb.

Why a run paces its activities at all: while a worker holds a workflow task,
the server buffers every new event of the run (a completed activity adds two,
ActivityTaskStarted and ActivityTaskCompleted). Past 100 buffered events
(``history.maximumBufferedEventsBatch``) or 2 MiB it force-closes the held
task (WorkflowTaskFailed, cause FORCE_CLOSE_COMMAND); the worker's completion
then comes back "task not found", the SDK evicts the run from its cache and
the next task replays the whole history — during which more completions
buffer. So what must stay bounded is the number of completions that arrive
while one task runs: about the run's completion rate times a task's duration.
docs/performance.md has the measurements.

The limits are configuration: ``limit`` activities in flight per run (default
1,000; Temporal refuses 2,000) and ``per_facet[f]`` per facet. Within them:

- up to ``SAFE_WIDTH`` (45) activities are admitted at once: their
  completions cannot fill the buffer however fast they come back;
- beyond that, a workflow task starts at most ``per_task`` activities, so its
  own work stays small and activities that take equally long do not all come
  back in one task's time; when the budget is spent and no completion is due
  soon, an ``ffl.Tick`` activity brings the next task (a server timer fires
  about a second late);
- and the activities in flight are kept to what ``rate`` completions per second
  allows (Little's law): each counts as ``1 / duration`` of it, ``duration``
  being the shortest its facet's activities took so far, or, while none has
  completed, at least the time since the first one started. Instant
  handlers thus run 45 at a time (more would only queue behind the handler
  worker), one-second handlers up to ``rate`` at once, slow ones up to
  ``limit``;
- ``rate`` follows the tasks, from a quarter of the configured rate: a task
  that received more than ``per_task`` completions (they crowd the server's
  buffer) scales it down in proportion; while tasks receive at most half as
  many it climbs back, the full configured rate in two seconds. The
  run probes what its tasks absorb — more on a quiet server, less on a busy
  one — instead of assuming it: which rate is safe depends on how long a
  workflow task takes, which this code cannot see.

Waiters are admitted in arrival order, per facet; a facet at its limit does
not hold up the others. Everything here depends only on history — workflow
time, and the task a call happens in (the history length) — so replay makes
the same decisions.

Nothing here touches Temporal: the clock (workflow time, the task's history
length) and the tick are given (admission.py gives the workflow's), so the
pacing is tested with a clock a test moves.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from interpreter.program.config import RuntimeConfig

DURATION_FLOOR = 0.02
"""Seconds: the least an activity is taken to last (workflow time only moves from task to task)."""

SAFE_WIDTH = 45
"""Activities a run may always have in flight: their completions (two events each) cannot fill the
server's buffer of 100 events while one workflow task runs, however fast they come back."""

TICK_UNLESS_DUE = 0.25
"""Seconds: no tick is asked for while activities that take less are in flight (their ends bring tasks)."""

START_FRACTION = 4
"""A run starts aiming at this fraction of the configured completion rate, and climbs while its tasks are calm."""

RAMP_SECONDS = 2.0
"""Seconds of calm tasks it takes the completion rate to climb from nothing to the configured rate: time,
not a count of tasks, because the effect of a wider run shows only once its activities come back."""


@dataclass
class _Waiter:
    seq: int
    facet: str
    granted: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


@dataclass
class _Facet:
    """What the run knows of one facet's activities: how many are in flight and how long they take."""

    in_flight: int = 0
    shortest: float | None = None  # seconds from admission to completion, the least seen so far
    first_start: float | None = None

    def expected(self, now: float) -> float:
        """Seconds one activity is taken to last: the shortest seen, else at least the time since the first began.

        The shortest, not an average: observed durations include time queued
        behind busy handler workers, and widening on those would only queue more.
        """
        if self.shortest is not None:
            return max(DURATION_FLOOR, self.shortest)
        return max(DURATION_FLOOR, now - (self.first_start if self.first_start is not None else now))

    def observe(self, took: float) -> None:
        self.shortest = took if self.shortest is None else min(self.shortest, took)


class Clock(Protocol):
    """What pacing reads of the run: the time now (seconds), and which workflow task a call happens in."""

    def now(self) -> float: ...

    def task(self) -> int: ...


class Admission:
    """Grants activity slots within the run's limits, its start budget per task and its completion rate."""

    def __init__(self, limit: int, per_task: int, rate: float, per_facet: Mapping[str, int] | None = None, *,
                 clock: Clock, tick: Callable[[int], Awaitable[None]], hold: Callable[[], bool] | None = None):
        """``tick(n)`` brings the next workflow task (the run's n-th ``ffl.Tick``); ``hold`` is true while the
        run admits nothing new (it is about to continue as new: continuation.py)."""
        self.clock = clock
        self.tick = tick
        self.limit = limit
        self.per_task = per_task
        self.max_rate = rate
        self.min_rate = min(rate, 2.0 * per_task)
        self.rate = max(self.min_rate, rate / START_FRACTION)  # completions per second aimed at now
        self.per_facet = dict(per_facet or {})
        self.in_flight = 0
        self.facets: dict[str, _Facet] = {}
        self._queues: dict[str, deque[_Waiter]] = {}  # facet → waiters in arrival order
        self._seq = itertools.count()
        self._task = -1  # history length at the workflow task the counters below count in
        self._started = 0
        self._completed = 0
        self._calm_since: float | None = None  # workflow time the last task began, for the rate's climb
        self._wake: asyncio.Task | None = None
        self._ticks = 0
        self.hold = hold

    @classmethod
    def from_config(cls, config: RuntimeConfig, clock: Clock, tick: Callable[[int], Awaitable[None]],
                    hold: Callable[[], bool] | None = None) -> Admission:
        return cls(config.max_pending_activities, config.max_starts_per_task, config.max_completions_per_second,
                   config.facet_max_pending, clock=clock, tick=tick, hold=hold)

    def slot(self, facet: str) -> Slot:
        """Hold one of the run's activity slots (and one of the facet's) for the body of ``async with``."""
        return Slot(self, facet)

    async def acquire(self, facet: str) -> float:
        """Wait for a slot; returns the workflow time it was granted at, for ``release``."""
        now = self._now()
        if not self.waiting() and self._admits(facet, now):
            self._take(facet, now)
            return now
        waiter = _Waiter(next(self._seq), facet)
        self._queues.setdefault(facet, deque()).append(waiter)
        self._grant(now)
        try:
            return await waiter.granted
        except asyncio.CancelledError:
            if waiter.granted.done() and not waiter.granted.cancelled():
                self.release(facet, None, grant=False)  # granted, then cancelled before it could start
            else:
                self._queues[facet].remove(waiter)
            raise

    def release(self, facet: str, granted: float | None, grant: bool = True) -> None:
        """Give a slot back; ``granted`` (from acquire) when the activity ran to an end, to learn its duration."""
        state = self.facets[facet]
        self.in_flight -= 1
        state.in_flight -= 1
        if not grant:
            return
        now = self._now()
        if granted is not None:
            self._completed += 1
            state.observe(now - granted)
        self._grant(now)

    # ------------------------------------------------------------------ internals

    def _now(self) -> float:
        """Workflow time; the first call in a new workflow task also settles the last task's counts."""
        task = self.clock.task()
        now = self.clock.now()
        if task != self._task:
            if self._completed > self.per_task:  # completions crowd the tasks: slow down in proportion
                self.rate = max(self.min_rate, self.rate * self.per_task / self._completed)
            elif self._completed <= self.per_task // 2 and self._calm_since is not None:  # calm: probe for more
                climbed = self.max_rate * (now - self._calm_since) / RAMP_SECONDS
                self.rate = min(self.max_rate, self.rate + climbed)
            self._calm_since = now
            self._task, self._started, self._completed = task, 0, 0
        return now

    def waiting(self) -> bool:
        """Whether an activity waits for a slot."""
        return any(self._queues.values())

    def _room(self, facet: str) -> bool:
        """The run's and the facet's limits, which only completions can make room in."""
        if self.in_flight >= self.limit:
            return False
        cap = self.per_facet.get(facet)
        return cap is None or self.facets.get(facet, _Facet()).in_flight < cap

    def _paced(self, facet: str, now: float) -> bool:
        """The task's start budget and the completion rate allow one more activity of ``facet``."""
        if self.in_flight < SAFE_WIDTH:
            return True
        if self._started >= self.per_task:
            return False
        load = sum(state.in_flight / state.expected(now) for state in self.facets.values() if state.in_flight)
        state = self.facets.get(facet) or _Facet(first_start=now)
        return load + 1 / state.expected(now) <= self.rate

    def _admits(self, facet: str, now: float) -> bool:
        if self.hold is not None and self.hold():
            return False
        return self._room(facet) and self._paced(facet, now)

    def _take(self, facet: str, now: float) -> None:
        state = self.facets.setdefault(facet, _Facet())
        if state.first_start is None:
            state.first_start = now
        self._started += 1
        self.in_flight += 1
        state.in_flight += 1

    def _grant(self, now: float | None = None) -> None:
        """Admit waiters, earliest first, while limits and pace allow; ask for a tick when only time would.

        ``now`` is the caller's ``_now()`` of this activation, when it has one: read again, it is the same."""
        if now is None:
            now = self._now()
        if not self.waiting():
            return
        if self.hold is not None and self.hold():  # the run continues as new once what is in flight is done
            return
        while True:
            heads = [queue[0] for facet, queue in self._queues.items() if queue and self._room(facet)]
            if not heads:
                return
            waiter = min(heads, key=lambda w: w.seq)
            if not self._paced(waiter.facet, now):
                if (self._started >= self.per_task or self._learning()) and not self._completion_due():
                    self._tick()
                return
            self._queues[waiter.facet].popleft()
            self._take(waiter.facet, now)
            waiter.granted.set_result(now)

    def _completion_due(self) -> bool:
        """Whether an activity in flight is known to take less than TICK_UNLESS_DUE: its end brings a task."""
        return any(state.in_flight and state.shortest is not None and state.shortest < TICK_UNLESS_DUE
                   for state in self.facets.values())

    def _learning(self) -> bool:
        """Whether a facet's expected duration still grows with time (none of its activities completed yet)."""
        return any(state.shortest is None and state.in_flight for state in self.facets.values())

    def _tick(self) -> None:
        if self._wake is None:
            self._wake = asyncio.create_task(self._tick_then_grant())

    async def _tick_then_grant(self) -> None:
        self._ticks += 1
        await self.tick(self._ticks)
        self._wake = None
        self._grant()


class Slot:
    """``async with admission.slot(facet)``: a slot for the body, given back as it ends — without learning a
    duration when the run is cancelled or evicted. A class, not a generator-based context manager: every
    step enters one, and ``contextlib``'s costs several times more."""

    __slots__ = ("admission", "facet", "granted")

    def __init__(self, admission: Admission, facet: str):
        self.admission = admission
        self.facet = facet
        self.granted = 0.0

    async def __aenter__(self) -> None:
        self.granted = await self.admission.acquire(self.facet)

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is not None and issubclass(kind, (asyncio.CancelledError, GeneratorExit)):
            self.admission.release(self.facet, None, grant=False)  # the run is being cancelled or evicted: start nothing
        else:
            self.admission.release(self.facet, self.granted)
