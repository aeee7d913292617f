"""The built-in steps of namespace ``ffl``, performed by the workflow itself: timers and waits for signals.

A timer is a Temporal timer in the run's history: no worker holds it, so it
survives worker and server restarts, and the time-skipping test server skips
it. The compiler marks these calls (``Call.kind == "builtin"``) and has
checked their arguments' names and static types; the values are checked
here, where they are known, failing the step (catchably) with a message
naming it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from interpreter.program.builtins import SLEEP, WAIT_FOR_SIGNAL, WAIT_UNTIL
    from interpreter.program.display import activity_summary, duration_text

from .signals import Signals
from .state import StepFailure
from .tracker import Tracker


def _seconds(path: str, facet: str, name: str, value: Any, *, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value:
        raise StepFailure(path, facet, f"argument '{name}' must be a number of seconds, 0 or more, got {value!r}",
                          "ValueError")
    return float(value)


def parse_time(path: str, value: Any) -> datetime:
    """An ISO-8601 date-time; one without an offset is UTC."""
    if not isinstance(value, str):
        raise StepFailure(path, WAIT_UNTIL, f"argument 'time' must be an ISO-8601 date-time string, got {value!r}",
                          "ValueError")
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise StepFailure(path, WAIT_UNTIL, f"argument 'time' is not an ISO-8601 date-time: {value!r} (e.g. "
                          "\"2030-01-31T09:00:00Z\")", "ValueError") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


class Builtins:
    """Runs one built-in step; ``signals`` holds the run's mailboxes, ``tracker`` shows what a step waits for."""

    def __init__(self, signals: Signals, tracker: Tracker):
        self.signals = signals
        self.tracker = tracker

    async def run(self, facet: str, args: dict[str, Any], path: str) -> dict[str, Any]:
        if facet == SLEEP:
            seconds = _seconds(path, facet, "seconds", args.get("seconds"))
            if seconds:
                until = workflow.now().timestamp() + seconds
                self.tracker.note(path, f"sleeping until {datetime.fromtimestamp(until, UTC).isoformat()}")
                await workflow.sleep(seconds, summary=activity_summary(f"ffl.Sleep({seconds:g} s)", path,
                                                                       self.tracker.root, self.tracker.items))
            return {}
        if facet == WAIT_UNTIL:
            moment = parse_time(path, args.get("time"))
            delay = (moment - workflow.now()).total_seconds()
            if delay > 0:
                self.tracker.note(path, f"sleeping until {moment.isoformat()}")
                await workflow.sleep(delay, summary=activity_summary(f"ffl.WaitUntil({moment.isoformat()})", path,
                                                                     self.tracker.root, self.tracker.items))
            return {}
        if facet == WAIT_FOR_SIGNAL:
            name = args.get("name")
            if not isinstance(name, str) or not name:
                raise StepFailure(path, facet, f"argument 'name' must be a non-empty signal name, got {name!r}",
                                  "ValueError")
            timeout = _seconds(path, facet, "timeout_seconds", args.get("timeout_seconds"), optional=True)
            self.tracker.note(path, f"waiting for signal '{name}'" + (f" (up to {duration_text(timeout)})" if timeout
                                                                      else ""), signal=name)
            payload, timed_out = await self.signals.wait(name, timeout, path)
            return {"payload": payload, "timed_out": timed_out}
        raise StepFailure(path, facet, f"'{facet}' is not a built-in step this interpreter knows (compiled by a "
                          "newer release?)", "InterpreterError")
