"""The arguments of the built-in steps, checked where their values are known (the compiler checked names
and static types): a bad value fails the step, catchably, with a message naming it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from interpreter.program.builtins import WAIT_FOR_SIGNAL, WAIT_UNTIL

from .failures import StepFailure


def seconds_arg(path: str, facet: str, name: str, value: Any, *, optional: bool = False) -> float | None:
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


def signal_name(path: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise StepFailure(path, WAIT_FOR_SIGNAL, f"argument 'name' must be a non-empty signal name, got {value!r}",
                          "ValueError")
    return value


def unknown_builtin(path: str, facet: str) -> StepFailure:
    return StepFailure(path, facet, f"'{facet}' is not a built-in step this interpreter knows (compiled by a "
                       "newer release?)", "InterpreterError")
