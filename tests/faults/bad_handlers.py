"""Handlers of bad_inputs.ffl: results no workflow can take, and a handler that hangs.

Every call appends a line to ``$FFL_FAULT_MARKS/<facet>-<mode>`` so tests count
calls (a refused result must not be retried).
"""

import os
import time
from pathlib import Path

from interpreter.activities.handlers import handler


def _mark(name: str) -> None:
    with open(Path(os.environ["FFL_FAULT_MARKS"]) / name, "a") as marks:
        marks.write(f"{os.getpid()}\n")


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@handler("bad.Produce")
def produce(payload):
    mode = payload["mode"]
    _mark(f"produce-{mode}")
    return {
        "ok": {"n": 7},
        "nan": {"n": float("nan")},
        "inf": {"n": float("inf")},
        "object": {"n": object()},
        "string": {"n": "seven"},
        "deep": {"n": 1, "extra": _deep(1000)},
        "digits": {"n": 10**5000},
    }[mode]


@handler("bad.Hang")
def hang(payload):
    _mark("hang")
    time.sleep(20)
    return {"n": payload["n"]}


@handler("bad.Nowhere")
def nowhere(payload):  # registered, but its queue is served by nobody
    return {"n": payload["n"]}
