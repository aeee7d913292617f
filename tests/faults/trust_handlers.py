"""Handlers of trust.ffl; every call appends a line to ``$FFL_FAULT_MARKS/<name>`` so tests count calls."""

import os
import time
from pathlib import Path

from interpreter.activities.handlers import handler


def _mark(name: str) -> None:
    with open(Path(os.environ["FFL_FAULT_MARKS"]) / name, "a") as marks:
        marks.write(f"{os.getpid()}\n")


@handler("trust.Value")
def value(payload):
    _mark("value")
    return {"v": payload["v"]}


@handler("trust.Wait")
def wait(payload):
    _mark(f"wait-{payload['n']}")
    time.sleep(payload["s"])
    return {"n": payload["n"]}


@handler("trust.Grow")
def grow(payload):
    _mark(f"grow-{payload['i']}")
    if payload["i"] == 3:  # the outage test kills MongoDB now: this step's result is stored during the outage
        time.sleep(1.0)
    return {"text": payload["text"] + str(payload["i"])}
