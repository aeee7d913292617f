"""Runs longer than one history: what a run completed, carried when it continues as new.

A run continued as new interprets the program from the start again, with
two records of what its predecessors did:

- the *snapshot* (runs since SNAPSHOT; interpreter/semantics/snapshot.py):
  every step, foreach iteration and block they completed. The interpreter
  gives a completed unit's yields and returns at once and runs nothing of
  it, so the new run's work is what was still open, not the logical run's
  past; only the returns open steps still read are carried;
- the *memo*: the result (or failure) of every handler, script, built-in
  step and child workflow, keyed by step path (a child by its chunk), for
  the work in flight when the run was carried (a handler done, its step's
  tail not) — and, for runs before SNAPSHOT, for everything.
  ``Remembered`` (remembered.py) is the effects layer that answers from
  it: a hit resolves at once and schedules nothing.

So the run's identity (workflow id) and its mirror records go on as if it
had never stopped; the steps query answers the steps this history ran and
counts those earlier runs completed. Records of steps the memo answers are
not mirrored again.

When the history reaches ``RuntimeConfig.continue_after_events`` events (a
local activity weighing as a remote one's events since SNAPSHOT) the run
*holds* (``Scale.holds``): admission grants no new activity and no child or
built-in step starts, what is in flight finishes (its results join the
memo), the mirror's records are sent, and once the run waits for nothing but
what it holds back it continues as new with ``[inputs, Continuation]``: the
snapshot and the memo (by reference once large), the mirror's record
sequence, the first run's id and the pinned program hash and configuration.
A run that holds but finishes without needing more simply finishes.

Everything here depends on history only (its length, results), so replay
takes the same decisions.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import TICK_ACTIVITY
    from interpreter.semantics.snapshot import Snapshot

from .admission import WorkflowClock
from .chunks import ChunkResult
from .features import Level
from .memo import (
    Continuation,
    Memo,
    is_chunk,
    kept_on_resume,
    reads_again,
)
from .pacing import Admission
from .tracker import Tracker
from .trust_checks import refused

MIRROR_BATCH_BYTES_BY_REFERENCE = 96 * 1024
"""Most JSON bytes of one Mirror activity input under SCALE: below the codec's 128 KB, so mirror batches
stay in history instead of filling the value store with blobs nobody reads twice."""


@dataclass(frozen=True)
class LocalPace:
    """How a history of local activities is cut (runs since SNAPSHOT), so that each replays and runs its
    tasks in bounded time.

    ``weight``: history events a local activity counts as towards ``continue_after_events``. Its marker is
    one event, but replaying it costs the SDK an activation of its own (about 1.5 ms here), as a remote
    activity's ~6 events do. ``batch``: local activities one workflow task runs; the next waits for an
    ``ffl.Tick`` activity, whose completion brings a new task. A task lasting past 80 % of its timeout is
    only kept alive by the SDK's heartbeats, and a slow machine fails it; a tick, not a timer, since the dev
    server fires a short timer up to a second late."""

    weight: int
    batch: int


SNAPSHOT_PACE = LocalPace(weight=6, batch=800)
"""Runs at Level.SNAPSHOT (0.2.0.dev4): ~1,300 local activities a history, replayed in 2–3 s, and
tasks of up to 800, 3–4 s on a loaded machine."""

SHORT_TASKS_PACE = LocalPace(weight=14, batch=300)
"""Runs since Level.SHORT_TASKS: ~570 local activities a history, replayed in about a second, in tasks
of at most 300 (under two seconds each on a loaded machine)."""


BRIEF_TASKS_PACE = LocalPace(weight=20, batch=200)
"""Runs since Level.BRIEF_TASKS: ~400 local activities a history and tasks of at most 200 (up to 1.4 s on a
loaded machine, where 300 took up to 2.1 s and a history of 570 replayed in up to 1.9 s)."""


def local_pace(level: Level) -> LocalPace | None:
    """The run's pace of local activities, by the release that started it (None before SNAPSHOT: a local
    activity is one event and a task runs any number of them)."""
    if level >= Level.BRIEF_TASKS:
        return BRIEF_TASKS_PACE
    if level >= Level.SHORT_TASKS:
        return SHORT_TASKS_PACE
    return SNAPSHOT_PACE if level >= Level.SNAPSHOT else None


RESTORE_BATCH = 500
"""Memo hits one workflow activation resolves before it yields (a local ``ffl.Tick``): re-running tens of
thousands of completed steps in one activation would pass the SDK's 2 s deadlock detection."""


class Scale:
    """A run's memo and snapshot, its hold on new work past ``continue_after_events``, and what it has in
    flight. With a ``pace`` (runs since SNAPSHOT): completed units are restored from the snapshot, and the memo
    answers only for work in flight when the run was carried (a handler done, its tail not)."""

    def __init__(self, events_limit: int, continued: Continuation | None = None, pace: LocalPace | None = None):
        """``pace`` (runs since SNAPSHOT, local_pace): completed units restore from a snapshot, and local
        activities are weighed and batched."""
        self.events_limit = events_limit
        self.pace = pace
        self.continued = continued
        self.memo = Memo(continued.memo if continued is not None else None)
        self.snapshot: Snapshot | None = None
        if pace is not None:
            try:
                self.snapshot = Snapshot(continued.snapshot if continued is not None else None)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
                raise refused(f"the continuation's snapshot is malformed: {type(err).__name__}: {err}"[:2000]) from None
        self.recovered_children = dict(continued.recovered_children) if continued is not None else {}
        self.started: dict[str, str] = {}  # chunk key → child workflow id, of children this history started
        self.again: set[str] = set(continued.again) if continued is not None else set()  # resume.py
        self.running: set[str] = set()  # paths of calls in flight (the recovery query names them)
        self.moving_to = ""  # the program hash ``ffl migrate`` moves the run to at its next safe point
        self.children = 0  # child workflows in flight
        self.builtins = 0  # built-in steps in flight (timers, waits for a signal)
        self.held = 0  # coroutines waiting because the run holds
        self._local_task = -1  # history length of the workflow task local activities are counted in
        self._local_done = 0
        self._local_total = 0  # local activities finished in this history (their markers)
        self._turn: asyncio.Future | None = None  # the tick that ends a workflow task of many local activities
        self._turns = 0
        self._restored = 0  # memo hits since the last yield
        self.yields = 0
        self._history_length = WorkflowClock().task  # the workflow task local activities are counted in

    def holds(self) -> bool:
        """Whether the run starts nothing new: its history has reached the limit (and it has done some work,
        so a continued run always gets further than the one before).

        Local activities finished in the current workflow task count too: their markers join the history
        only when the task completes, and a chain of them may run in one task."""
        if self.moving_to:
            return True
        if not self.memo.fresh:
            return False
        length = self._history_length()
        local = self._local_done if self._local_task == length else 0
        if self.pace is not None:  # a local activity replays like a remote one: weighed as such
            recorded = self._local_total - local  # markers already in ``length``, one event each
            weight = self.pace.weight
            return length + recorded * (weight - 1) + local * weight >= self.events_limit
        return length + local >= self.events_limit

    async def local_turn(self, tick: workflow.ActivityConfig) -> None:
        """Before a local activity (runs since SNAPSHOT): past the pace's batch of them in this workflow task,
        end the task first, waiting for an ``ffl.Tick`` (one for every step waiting at this point)."""
        if self.pace is None:
            return
        if self._local_task == self._history_length() and self._local_done >= self.pace.batch:
            if self._turn is None or self._turn.done():
                self._turns += 1
                self._turn = asyncio.ensure_future(workflow.execute_activity(
                    TICK_ACTIVITY, activity_id=f"turn/{self._turns}", **tick))
            await asyncio.shield(self._turn)

    def end_task(self) -> None:
        """The next local activity waits for a new workflow task: this one has had its share of work (it
        parsed a program LoadProgram was slow to load, loading.load_pinned)."""
        if self.pace is not None:
            self._local_task, self._local_done = self._history_length(), self.pace.batch

    def local_done(self) -> None:
        """A local activity finished: one marker event more once this workflow task completes."""
        length = self._history_length()
        if length != self._local_task:
            self._local_task, self._local_done = length, 0
        self._local_done += 1
        self._local_total += 1

    async def restored(self) -> None:
        """One memo hit; every RESTORE_BATCH of them the activation yields, so the next batch is a new one."""
        self._restored += 1
        if self._restored < RESTORE_BATCH:
            return
        self._restored = 0
        self.yields += 1
        await workflow.execute_local_activity(TICK_ACTIVITY, activity_id=f"restore/{self.yields}",
                                              start_to_close_timeout=timedelta(seconds=10))

    async def gate(self) -> None:
        """Wait while the run holds (for good: the run then continues as new before this returns)."""
        if not self.holds():
            return
        self.held += 1
        try:
            await workflow.wait_condition(lambda: False)
        finally:
            self.held -= 1

    @contextmanager
    def child_in_flight(self) -> Iterator[None]:
        """A child workflow runs while the body does: the run never continues as new with one under way."""
        self.children += 1
        try:
            yield
        finally:
            self.children -= 1

    @contextmanager
    def builtin_in_flight(self) -> Iterator[None]:
        """A built-in step (a timer, a wait for a signal) runs while the body does, likewise."""
        self.builtins += 1
        try:
            yield
        finally:
            self.builtins -= 1

    def drained(self, admission: Admission) -> bool:
        """Held, nothing in flight, and something waits for what the run holds back: time to continue."""
        return (self.holds() and admission.in_flight == 0 and self.children == 0 and self.builtins == 0
                and (self.held > 0 or admission.waiting()))

    async def run(self, work: Coroutine[Any, Any, Any], admission: Admission) -> tuple[bool, Any]:
        """Run ``work``; (True, its result) when it finished, (False, None) when the run must continue as new."""
        task = asyncio.ensure_future(work)
        try:
            await workflow.wait_condition(lambda: task.done() or self.drained(admission))
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise
        if task.done():
            return True, task.result()
        return False, None

    def carry(self, tracker: Tracker, run_id: str, program_hash: str, config: dict[str, Any],
              signals: dict[str, Any] | None = None) -> Continuation:
        runs = self.continued.runs + 1 if self.continued is not None else 2
        memo, children, moved_from = self.memo.carried(), self.recovered_children, ""
        snapshot = earlier = None
        if self.moving_to and self.moving_to != program_hash:  # ffl migrate: checked by digest in the next run
            plain = {key: dataclasses.asdict(entry) if isinstance(entry, ChunkResult) else entry
                     for key, entry in memo.items()}
            memo, moved_from = kept_on_resume(plain, (), True), program_hash
            for key, entry in memo.items():  # each child's iterations are checked again under the new program
                if is_chunk(entry) and entry.get("run") and entry.get("child_id"):
                    children = {**children, key: [entry["child_id"], entry["run"]]}
            program_hash = self.moving_to  # no snapshot: under another program each call is checked by digest
        elif self.snapshot is not None:  # what the snapshot answers for is not carried twice
            memo = {key: entry for key, entry in memo.items() if not self.snapshot.covers(key)}
            snapshot = self.snapshot.carried()
            earlier = tracker.carried_counts(memo)  # the next run records only what the memo answers again
        return Continuation(memo=memo, seq=tracker.seq, run_id=run_id, program_hash=program_hash, config=config,
                            runs=runs, signals=signals, previous_run=workflow.info().run_id, snapshot=snapshot,
                            earlier=earlier, recovered_children=children, again=sorted(self.again),
                            moved_from=moved_from)

    def honours(self, path: str, entry: dict[str, Any], digest: str, refs: list[str]) -> bool:
        """Whether a memo entry answers this call: made for the same facet and arguments, and — when it was
        kept from the run this one resumes (``p``) — not reading a step that runs again. A refused entry's
        path runs again, so its own readers do too."""
        fits = entry.get("a", digest) == digest and not (entry.get("p") and reads_again(path, refs, self.again))
        if not fits:
            self.again.add(path)
        return fits
