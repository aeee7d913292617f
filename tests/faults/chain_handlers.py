"""Handlers of chain.ffl. Each call appends its pid to ``$FFL_FAULT_MARKS/<facet>-<i>``.

``chain.Slow`` heartbeats every 0.2 s; its first attempt lasts
``$FFL_FAULT_SLOW_FIRST`` seconds (long enough for a test to kill its worker);
with ``$FFL_FAULT_SLOW_SILENT`` set it never heartbeats (its worker does for it).
``$FFL_FAULT_STEP_SECONDS`` slows every step down so a run lasts long enough
to be interrupted.
"""

import os
import time
from pathlib import Path

from interpreter.activities.handlers import handler


def _mark(name: str) -> None:
    with open(Path(os.environ["FFL_FAULT_MARKS"]) / name, "a") as marks:
        marks.write(f"{os.getpid()}\n")


@handler("chain.Step")
def step(payload):
    _mark(f"step-{payload['i']}")
    time.sleep(float(os.environ.get("FFL_FAULT_STEP_SECONDS", "0")))
    return {"n": payload["n"] * 2 + payload["i"]}


@handler("chain.Slow")
def slow(payload):
    _mark(f"slow-attempt-{payload['_retry_count'] + 1}")
    first = float(os.environ.get("FFL_FAULT_SLOW_FIRST", "0.2"))
    seconds = first if payload["_retry_count"] == 0 else 0.2
    deadline = time.monotonic() + seconds
    silent = bool(os.environ.get("FFL_FAULT_SLOW_SILENT"))
    while time.monotonic() < deadline:
        if not silent:
            payload["_task_heartbeat"]()
        time.sleep(0.2)
    return {"n": payload["n"] + 1000}
