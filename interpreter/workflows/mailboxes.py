"""Signals and updates a run receives, and the ``ffl.WaitForSignal`` steps that take them.

One mailbox per signal name, in two queues: payloads nobody has taken yet
(kept, in arrival order) and steps waiting (in the order they started to
wait). A payload goes to the oldest waiting step, else it is kept for the
next step that waits on its name; so several waits on one name are answered
in order, and a signal sent before its wait is not lost. Arrival order is
history order, so replay hands out every payload alike.

An update (``ffl signal --wait``) is a signal that must be taken at once:
its validator refuses it when no step waits on its name, and it returns the
path of the step that took it.

Every received signal is recorded (``received``: name, arrival, and which
step took it or that it is kept), shown by the ``signals`` query and ``ffl
status``, and logged to the run's log (the mirror's ``logs``) when it is
kept — a signal no step waits for is visible, never silently dropped.

The mailboxes here never touch Temporal: the clock that stamps arrivals is
given, and signals.py adds the wait itself (a workflow condition) and the
decoding of payloads.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

RECEIVED_LIMIT = 1_000
"""Most signals the ``signals`` query lists (the newest); older ones only count."""


@dataclass
class Waiter:
    path: str
    done: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


@dataclass
class Mailbox:
    kept: deque[tuple[int, Any]] = field(default_factory=deque)  # (received index, payload)
    waiting: deque[Waiter] = field(default_factory=deque)


class Mailboxes:
    """The run's mailboxes, one per signal name; ``clock`` stamps each arrival."""

    def __init__(self, clock: Callable[[], datetime]) -> None:
        self.clock = clock
        self.boxes: dict[str, Mailbox] = {}
        self.received: list[dict[str, Any]] = []
        self.count = 0

    def box(self, name: str) -> Mailbox:
        found = self.boxes.get(name)
        if found is None:
            found = self.boxes[name] = Mailbox()
        return found

    # ------------------------------------------------------------------ arriving

    def deliver(self, name: str, payload: Any, via: str = "signal") -> str | None:
        """Hand ``payload`` to the oldest step waiting on ``name`` (its path), else keep it (None)."""
        index = self.count
        self.count += 1
        record: dict[str, Any] = {"index": index, "name": name, "via": via, "time": self.clock().isoformat(),
                                  "state": "kept", "step": None}
        self.received.append(record)
        if len(self.received) > RECEIVED_LIMIT:
            del self.received[0]
        box = self.box(name)
        while box.waiting:
            waiter = box.waiting.popleft()
            if not waiter.done.done():  # a wait that timed out has left already
                waiter.done.set_result(payload)
                record["state"], record["step"] = "taken", waiter.path
                return waiter.path
        box.kept.append((index, payload))
        return None

    def waiting_on(self, name: str) -> bool:
        box = self.boxes.get(name)
        return box is not None and any(not w.done.done() for w in box.waiting)

    def _taken(self, index: int, path: str) -> None:
        for record in reversed(self.received):
            if record["index"] == index:
                record["state"], record["step"] = "taken", path
                return

    # ------------------------------------------------------------------ continue-as-new

    def carry(self) -> dict[str, Any]:
        """What a run continued as new takes along: kept payloads by name, the count and the received log
        (no step waits when a run continues: it waits for its built-in steps first)."""
        kept = {name: [[index, payload] for index, payload in box.kept] for name, box in self.boxes.items()
                if box.kept}
        return {"count": self.count, "received": [dict(r) for r in self.received], "kept": kept}

    def restore(self, carried: dict[str, Any]) -> None:
        """The signals of the run this one continues; any received since come after them."""
        offset = int(carried.get("count") or 0)
        for record in self.received:  # arrived before this run loaded: numbered after the carried ones
            record["index"] += offset
        for name in sorted(self.boxes):
            box = self.boxes[name]
            box.kept = deque((index + offset, payload) for index, payload in box.kept)
        for name in sorted(carried.get("kept") or {}):
            entries = carried["kept"][name]
            self.box(name).kept.extendleft((int(index), payload) for index, payload in reversed(entries))
        self.received = [*(carried.get("received") or []), *self.received][-RECEIVED_LIMIT:]
        self.count += offset

    # ------------------------------------------------------------------ what the run shows

    def snapshot(self) -> dict[str, Any]:
        """For the ``signals`` query: every signal received (the newest RECEIVED_LIMIT), and who waits on what."""
        waiting = {name: [w.path for w in box.waiting if not w.done.done()] for name, box in self.boxes.items()}
        return {"received": [dict(r) for r in self.received], "count": self.count,
                "waiting": {name: paths for name, paths in waiting.items() if paths},
                "kept": {name: len(box.kept) for name, box in self.boxes.items() if box.kept}}
