"""Runs longer than one history: a memo of completed work, and continue-as-new when the history is long.

The interpreter is deterministic given the results of its activities, so a
run continued as new simply interprets the program again from the start
with a *memo*: the result (or failure) of every handler, script and child
workflow it completed so far, keyed by the step path (a child by its chunk).
A memo hit resolves at once and schedules nothing; the first miss is where
the run left off. So the run's identity (workflow id), its steps query and
its mirror records continue as if it had never stopped: the re-run rebuilds
the same step records, and records of steps restored from the memo are not
mirrored again.

When the history reaches ``RuntimeConfig.continue_after_events`` events the
run *holds*: admission grants no new activity and no child starts, the
activities and children in flight finish (their results join the memo),
the mirror's records are sent, and once the run waits for nothing but what
it holds back it continues as new with ``[inputs, Continuation]``: the memo
(passed by reference by the payload codec once it is large), the mirror's
record sequence, the first run's id and the pinned program hash and
configuration, so the new run loads exactly the program and settings the
run started with. A run that holds but finishes without needing more simply
finishes.

Everything here depends on history only (its length, results), so replay
takes the same decisions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import TICK_ACTIVITY

MIRROR_BATCH_BYTES_BY_REFERENCE = 96 * 1024
"""Most JSON bytes of one Mirror activity input under SCALE_PATCH: below the codec's 128 KB, so mirror batches
stay in history instead of filling the value store with blobs nobody reads twice."""

RESTORE_BATCH = 500
"""Memo hits one workflow activation resolves before it yields (a local ``ffl.Tick``): re-running tens of
thousands of completed steps in one activation would pass the SDK's 2 s deadlock detection."""

SCALE_PATCH = "ffl-scale"
"""Patch introduced after release 0.2.0.dev1: child workflows for large foreach blocks, continue-as-new with a
memo, handlers as local activities where the interpreter serves them. Runs started before it keep one history."""


@dataclass
class Continuation:
    """What a run continued as new carries over (its second workflow argument)."""

    memo: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    run_id: str = ""
    program_hash: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    runs: int = 1
    """Runs of this logical run so far, this one included."""
    signals: dict[str, Any] | None = None
    """The run's signals (Signals.carry): payloads kept for a later wait, the received log."""


def continuation_of(args: Sequence[RawValue]) -> Continuation | None:
    """The Continuation a run was continued with (its second argument), None for a run started afresh.

    A run started afresh with more than one input (``temporal workflow start --input A --input B``) fails.
    """
    if len(args) < 2:
        return None
    if workflow.info().continued_run_id is None:
        raise ApplicationError(f"a workflow takes one input, a JSON object of parameters; this run was started "
                               f"with {len(args)} (one --input each)", type="InvalidParameters", non_retryable=True)
    value = workflow.payload_converter().from_payload(args[1].payload, Continuation)
    return value if isinstance(value, Continuation) else None


class Memo:
    """Completed results by key: ``restored`` from earlier runs of this logical run, ``fresh`` from this one."""

    def __init__(self, restored: dict[str, Any] | None = None):
        self.restored: dict[str, Any] = dict(restored or {})
        self.fresh: dict[str, Any] = {}

    def get(self, key: str) -> Any | None:
        found = self.restored.get(key)
        return found if found is not None else self.fresh.get(key)

    def put(self, key: str, entry: Any) -> None:
        self.fresh[key] = entry

    def carried(self) -> dict[str, Any]:
        return {**self.restored, **self.fresh}

    def __len__(self) -> int:
        return len(self.restored) + len(self.fresh)


def result_entry(result: Any) -> dict[str, Any]:
    return {"r": result}


def failure_entry(message: str, error_type: str) -> dict[str, Any]:
    return {"e": [message, error_type]}


class Scale:
    """A run's memo, its hold on new work past ``continue_after_events``, and what it has in flight."""

    def __init__(self, events_limit: int, continued: Continuation | None = None):
        self.events_limit = events_limit
        self.continued = continued
        self.memo = Memo(continued.memo if continued is not None else None)
        self.children = 0  # child workflows in flight
        self.builtins = 0  # built-in steps in flight (timers, waits for a signal)
        self.held = 0  # coroutines waiting because the run holds
        self.in_flight = lambda: 0  # activities in flight (the interpreter's admission)
        self.admission_waiting = lambda: False
        self._local_task = -1  # history length of the workflow task local activities are counted in
        self._local_done = 0
        self._restored = 0  # memo hits since the last yield
        self.yields = 0

    def holds(self) -> bool:
        """Whether the run starts nothing new: its history has reached the limit (and it has done some work,
        so a continued run always gets further than the one before).

        Local activities finished in the current workflow task count too: their markers join the history
        only when the task completes, and a chain of them may run in one task."""
        if not self.memo.fresh:
            return False
        length = workflow.info().get_current_history_length()
        local = self._local_done if self._local_task == length else 0
        return length + local >= self.events_limit

    def local_done(self) -> None:
        """A local activity finished: one marker event more once this workflow task completes."""
        length = workflow.info().get_current_history_length()
        if length != self._local_task:
            self._local_task, self._local_done = length, 0
        self._local_done += 1

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

    def drained(self) -> bool:
        """Held, nothing in flight, and something waits for what the run holds back: time to continue."""
        return (self.holds() and self.in_flight() == 0 and self.children == 0 and self.builtins == 0
                and (self.held > 0 or self.admission_waiting()))

    async def run(self, work: Coroutine[Any, Any, Any]) -> tuple[bool, Any]:
        """Run ``work``; (True, its result) when it finished, (False, None) when the run must continue as new."""
        task = asyncio.ensure_future(work)
        try:
            await workflow.wait_condition(lambda: task.done() or self.drained())
        except asyncio.CancelledError:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise
        if task.done():
            return True, task.result()
        return False, None

    def carry(self, seq: int, run_id: str, program_hash: str, config: dict[str, Any],
              signals: dict[str, Any] | None = None) -> Continuation:
        runs = self.continued.runs + 1 if self.continued is not None else 2
        return Continuation(memo=self.memo.carried(), seq=seq, run_id=run_id, program_hash=program_hash,
                            config=config, runs=runs, signals=signals)
