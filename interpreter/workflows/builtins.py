"""The built-in steps of namespace ``ffl`` on Temporal: timers and waits for signals.

A timer is a Temporal timer in the run's history: no worker holds it, so it
survives worker and server restarts, and the time-skipping test server skips
it. The argument checks are the language's (semantics.builtin_args).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from interpreter.program.builtins import SLEEP, WAIT_FOR_SIGNAL, WAIT_UNTIL
    from interpreter.program.display import activity_summary, duration_text
    from interpreter.semantics.builtin_args import parse_time, seconds_arg, signal_name, unknown_builtin

from .signals import Signals
from .tracker import Tracker


class Builtins:
    """Runs one built-in step; ``signals`` holds the run's mailboxes, ``tracker`` shows what a step waits for."""

    def __init__(self, signals: Signals, tracker: Tracker):
        self.signals = signals
        self.tracker = tracker

    async def run(self, facet: str, args: dict[str, Any], path: str) -> dict[str, Any]:
        if facet == SLEEP:
            seconds = seconds_arg(path, facet, "seconds", args.get("seconds"))
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
            name = signal_name(path, args.get("name"))
            timeout = seconds_arg(path, facet, "timeout_seconds", args.get("timeout_seconds"), optional=True)
            self.tracker.note(path, f"waiting for signal '{name}'" + (f" (up to {duration_text(timeout)})" if timeout
                                                                      else ""), signal=name)
            summary = activity_summary(f"ffl.WaitForSignal('{name}') timeout", path, self.tracker.root,
                                       self.tracker.items)
            payload, timed_out = await self.signals.wait(name, timeout, path, summary)
            return {"payload": payload, "timed_out": timed_out}
        raise unknown_builtin(path, facet)
