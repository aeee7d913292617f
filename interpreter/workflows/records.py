"""What a run reports about itself: the steps query, current details and mirror records.

The records only record; the workflow decides when mirror batches are sent.
All updates are O(1) per step event so no workflow task does work
proportional to the graph.

Nothing here touches Temporal: the time records are stamped with, where the
current details go and the logger are given (tracker.py gives the
workflow's), so the records are tested without a run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any

from interpreter.program.display import current_details, item_text, readable_path, wait_text
from interpreter.program.mirror_records import (
    LogRecord,
    RunnerRecord,
    ScheduledTaskRecord,
    StepRecord,
    WorkflowRecord,
)
from interpreter.program.queries import StepsPage, StepsQuery
from interpreter.program.steps_view import first_records, page_of

STATES = ("running", "completed", "failed", "caught", "cancelled")

WARNINGS_KEPT = 100
"""Warnings the warnings query answers (the newest); every one is in the worker log and the run's log."""


class Records:
    """The records of one history of a logical run (``workflow_id``, ``run_id``: the logical run's identity).

    ``seq`` is the number of the next mirror record (a continued run or a child goes on from where its
    predecessor's numbers end); ``quiet`` the paths whose records an earlier run of this logical run
    already mirrored; ``places`` the mirror places a child inherits (its foreach's owner step); ``earlier``
    the step counts of units earlier runs completed that this history restores without a record.
    ``clock`` stamps the records, ``show`` takes the current details (the Web UI's), ``logger`` the log lines.
    ``later`` (the workflow's ``call_soon``) defers the details to the end of the activation: a step's records
    change them several times in one, and only the last is read. They wait two turns of the loop: a step
    that completes wakes the steps that read it in the turn after its own, and those start before the details
    of both come out once.
    """

    def __init__(self, workflow_id: str, run_id: str, program_hash: str, *, clock: Callable[[], datetime],
                 show: Callable[[str], None], logger: logging.Logger | logging.LoggerAdapter,
                 mirror: bool = False, seq: int = 0,
                 quiet: Collection[str] = (), root: str = "", header: str = "",
                 places: dict[str, tuple[str | None, str, str]] | None = None, blocks: Collection[str] = (),
                 earlier: dict[str, int] | None = None, later: Callable[[Callable[[], None]], object] | None = None):
        self.clock = clock
        self.show = show
        self.later = later
        self._stale = False  # details changed and their publication is scheduled
        self.logger = logger
        self.workflow_id = workflow_id
        self.run_id = run_id
        self.program_hash = program_hash  # step and task records carry it (flow ids)
        self.mirror = mirror
        self.seq = seq  # position of the next mirror record in the run: the mirror's deterministic log order
        self.quiet = quiet
        self.root = root  # the workflow's short name and what it runs, for the Web UI's current details
        self.header = header
        self.steps: dict[str, dict[str, Any]] = {}
        self.counts = dict.fromkeys(STATES, 0)
        self.buffer: list[WorkflowRecord] = []
        self.places: dict[str, tuple[str | None, str, str]] = dict(places or {})  # path → (parent, block, root)
        self.blocks: set[str] = set(blocks)  # paths of mirrored blocks
        self.running: dict[str, str] = {}  # running step path → facet, in start order (the last is current)
        self.waits: dict[str, tuple[str, str | None]] = {}  # waiting built-in step → (note, signal name)
        self.warnings: list[dict[str, str]] = []  # the newest WARNINGS_KEPT warnings, for the warnings query
        self.items: dict[str, str] = {}  # foreach iteration path → its element, short (for summaries)
        self.children: dict[str, dict[str, Any]] = {}  # chunk key → child workflow record (children.py)
        self.child_counts = dict.fromkeys(STATES, 0)  # step counts of finished children, nested ones included
        given = earlier or {}
        self.earlier = {name: given[name] if isinstance(given.get(name), int) else 0 for name in STATES}
        if header:
            self._details()

    # ------------------------------------------------------------------ steps

    def step(self, path: str, facet: str, state: str, *, statement_id: str = "", object_type: str = "",
             params: dict | None = None, returns: dict | None = None, error: str | None = None,
             parent: str | None = None, block: str = "") -> None:
        """Record a step's state; ``parent`` (enclosing step) and ``block`` are given on its first record."""
        record = self.steps.get(path)
        if record is None:
            record = {"path": path, "facet": facet, "state": state, "returns": None, "error": None}
            self.steps[path] = record
        else:
            self.counts[record["state"]] -= 1
            record["state"] = state
            record.pop("waiting", None)
            self.waits.pop(path, None)
        self.counts[state] += 1
        if returns is not None and state != "running":
            record["returns"] = returns
        if error is not None:
            record["error"] = error
        if state == "running":
            self.running[path] = facet
        else:
            self.running.pop(path, None)
        self._details()
        if self.mirror and path not in self.quiet:
            place = self.places.get(path)
            if place is None:
                root = self.places[parent][2] if parent in self.places else (parent or path)
                place = self.places[path] = (parent, block, root)
            self.buffer.append(StepRecord(
                kind="step", workflow_id=self.workflow_id, run_id=self.run_id, path=path, statement_id=statement_id,
                facet=facet, object_type=object_type, parent_path=place[0], block_path=place[1], root_path=place[2],
                state=state, params=params, returns=returns, error=error, program_hash=self.program_hash,
                time=self.clock().isoformat(), seq=self._next()))

    def note(self, path: str, waiting: str, signal: str | None = None) -> None:
        """What a running step waits for (a timer, a signal), shown by the steps query until its next state."""
        record = self.steps.get(path)
        if record is not None:
            record["waiting"] = waiting
            self.waits[path] = (waiting, signal)
            self._details()

    def block(self, path: str, object_type: str, state: str, *, parent: str | None, error: str | None = None,
              returns: dict | None = None, foreach: tuple[str, Any] | None = None, facet: str = "") -> None:
        """Mirror-only record of a block (AndThen, AndMap, AndMatch) or a yield (YieldAssignment).

        Blocks are not steps of the steps query; their mirror documents make
        the steps' ``block_id`` resolve. The enclosing block is the nearest
        recorded block whose path is a prefix of ``path``. ``foreach`` is an
        iteration's (variable, element); ``facet`` a yield's target, and the
        element is kept short in ``items`` for summaries (display.readable_path).
        """
        if foreach is not None and path not in self.items:
            self.items[path] = item_text(*foreach)
        if not self.mirror:
            return
        place = self.places.get(path)
        if place is None:
            enclosing = path
            while "/" in enclosing:
                enclosing = enclosing.rsplit("/", 1)[0]
                if enclosing in self.blocks:
                    break
            else:
                enclosing = ""
            root = self.places[parent][2] if parent in self.places else (parent or path)
            place = self.places[path] = (parent, enclosing, root)
            self.blocks.add(path)
        iteration = {"foreach": list(foreach)} if foreach is not None else {}
        self.buffer.append(StepRecord(
            kind="step", workflow_id=self.workflow_id, run_id=self.run_id, path=path, statement_id="", facet=facet,
            object_type=object_type, parent_path=place[0], block_path=place[1], root_path=place[2], state=state,
            params=None, returns=returns, error=error, program_hash=self.program_hash,
            time=self.clock().isoformat(), **iteration, seq=self._next()))  # type: ignore[typeddict-item]

    def task(self, path: str, facet: str, queue: str, params: dict | None = None) -> None:
        """An event-facet activity is scheduled (with the step's arguments): its task is ``pending`` until a
        handler reports."""
        if self.mirror:
            self.buffer.append(ScheduledTaskRecord(
                kind="task", workflow_id=self.workflow_id, run_id=self.run_id, activity_id=path, facet=facet,
                queue=queue, attempt=1, state="pending", params=params, program_hash=self.program_hash,
                time=self.clock().isoformat(), seq=self._next()))

    def child(self, key: str, workflow_id: str, path: str, first: int, last: int, state: str,
              counts: dict[str, int] | None = None) -> None:
        """A child workflow running iterations ``first``..``last`` of the foreach at ``path`` (children.py)."""
        record = self.children.get(key)
        if record is None:
            record = self.children[key] = {"workflow_id": workflow_id, "path": path, "first": first, "last": last,
                                           "state": state, "counts": None}
        record["state"] = state
        if counts is not None and record["counts"] is None:
            record["counts"] = dict(counts)
            for name, number in counts.items():
                if name in self.child_counts:
                    self.child_counts[name] += number
            self._details()

    def totals(self) -> dict[str, int]:
        """Step counts of the logical run as far as this history knows: its own and its finished children's."""
        return {name: self.counts[name] + self.child_counts[name] + self.earlier[name] for name in STATES}

    def carried_counts(self, recorded_again: Collection[str]) -> dict[str, int]:
        """The counts a continued run inherits: everything so far but the records it will make again (steps
        and children its memo answers, which it re-runs and records anew)."""
        totals = self.totals()
        for key in recorded_again:
            record = self.steps.get(key)
            if record is not None:
                totals[record["state"]] -= 1
            child = self.children.get(key)
            if child is not None and child.get("counts"):
                for name, number in child["counts"].items():
                    if name in totals:
                        totals[name] -= number
        return totals

    def snapshot(self) -> list[dict[str, Any]]:
        """The steps query without an argument: the first step records (steps_view.first_records)."""
        return first_records(self.steps)

    def page(self, query: StepsQuery) -> StepsPage:
        """The steps query with an argument: one page of the records it selects (steps_view.page_of)."""
        return page_of(self.steps, query, self.counts, self.children, self.earlier)

    def _details(self) -> None:
        if self.later is None:
            self._publish()
        elif not self._stale:
            self._stale = True
            self.later(self._publish_next_turn)

    def _publish_next_turn(self) -> None:
        assert self.later is not None
        self.later(self._publish)

    def _publish(self) -> None:
        self._stale = False
        current = None
        if self.waits:  # a wait says what it waits for, and how to end it
            path, (note, signal) = next(iter(self.waits.items()))
            current = f"{readable_path(path, self.root, self.items)}: {wait_text(note, signal, self.workflow_id)}"
        elif self.running:
            path = next(reversed(self.running))
            current = f"{self.running[path]} at {readable_path(path, self.root, self.items)}"
        counts = self.totals() if self.children else self.counts
        self.show(current_details(self.header, counts, current, len(self.waits)))

    # ------------------------------------------------------------------ runner and log

    def runner(self, workflow_name: str, state: str, *, params: dict | None = None, returns: dict | None = None,
               error: str | None = None, program_hash: str = "") -> None:
        self.program_hash = program_hash or self.program_hash
        if self.mirror:
            self.buffer.append(RunnerRecord(
                kind="runner", workflow_id=self.workflow_id, run_id=self.run_id, workflow=workflow_name, state=state,
                params=params, returns=returns, error=error, program_hash=program_hash,
                time=self.clock().isoformat(), seq=self._next()))

    def warn(self, path: str, message: str) -> None:
        """A warning: in the worker log at WARNING, the run's log, and the step's record (steps query, status)."""
        self.logger.warning("%s: %s", path or "workflow", message)
        self.warnings = [*self.warnings[-(WARNINGS_KEPT - 1):], {"path": path, "message": message}]
        record = self.steps.get(path)
        if record is not None:
            record.setdefault("warnings", []).append(message)
        self._emit_log(path, f"warning: {message}")

    def log(self, path: str, message: str) -> None:
        self.logger.info("%s: %s", path or "workflow", message)
        self._emit_log(path, message)

    def _emit_log(self, path: str, message: str) -> None:
        if self.mirror and path not in self.quiet:
            self.buffer.append(LogRecord(kind="log", workflow_id=self.workflow_id, run_id=self.run_id, path=path,
                                 message=message, time=self.clock().isoformat(), seq=self._next()))

    def _next(self) -> int:
        """The next record's number, in emission order (deterministic: replay numbers it alike)."""
        self.seq += 1
        return self.seq - 1

    def take(self, limit: int, max_bytes: int | None = None) -> list[WorkflowRecord]:
        """The oldest ``limit`` records, fewer once their JSON reaches ``max_bytes`` (at least one).

        A batch is one activity input, recorded in history: Temporal refuses a
        payload over 2 MB, so large params/returns must not add up past it.
        """
        count = min(limit, len(self.buffer))
        if max_bytes is not None:
            size = 0
            for index in range(count):
                record_size = len(json.dumps(self.buffer[index], default=str))
                if record_size > max_bytes:
                    self.buffer[index] = _shrunk(self.buffer[index], record_size)
                    record_size = len(json.dumps(self.buffer[index], default=str))
                size += record_size
                if size >= max_bytes:
                    count = max(1, index)
                    break
        batch, self.buffer = self.buffer[:count], self.buffer[count:]
        return batch


def _shrunk(record: WorkflowRecord, size: int) -> WorkflowRecord:
    """A record too large for one batch keeps its identity; its bulky values are replaced by a note."""
    shrunk: dict[str, Any] = dict(record)
    for key in ("params", "returns"):
        if shrunk.get(key) is not None:
            shrunk[key] = {"_omitted": f"mirror record of {size} bytes: {key} too large to mirror"}
    if shrunk.get("foreach") is not None:  # an iteration's element
        shrunk["foreach"] = [shrunk["foreach"][0], {"_omitted": f"mirror record of {size} bytes: element too large"}]
    for key in ("message", "error"):  # text stays text, cut short
        if isinstance(shrunk.get(key), str) and len(shrunk[key]) > 10_000:
            shrunk[key] = shrunk[key][:10_000] + " …(cut)"
    return shrunk  # type: ignore[return-value]  # the same kind of record, its values cut
