"""What a run continued as new carries, and its memo of completed work: plain data (continuation.py uses it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    previous_run: str = ""
    """The run that continued as new with it: the next run checks it is Temporal's ``continued_run_id`` (trust.py)."""
    earlier: dict[str, int] | None = None
    """Step counts of what earlier runs completed and the next run restores without recording it again."""
    snapshot: dict[str, Any] | None = None
    """The units completed so far (semantics/snapshot.py, ``Snapshot.carried``); None before SNAPSHOT."""


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


def result_entry(result: Any) -> dict[str, Any]:
    return {"r": result}


def failure_entry(message: str, error_type: str) -> dict[str, Any]:
    return {"e": [message, error_type]}


