"""The ``steps`` query's request and answer, shared by the workflow and its callers.

``handle.query("steps")`` without an argument answers a plain list of step
records (the first ``LEGACY_LIMIT``, in the order they started), as it always
did. With a ``StepsQuery`` (or the same keys as JSON, e.g. from
``temporal workflow query --name steps --input '{"state": "failed"}'``) it
answers one ``StepsPage``: the matching steps from ``offset`` on, at most
``limit`` of them, with the totals a progress display needs, so a
100,000-step run can be inspected page by page.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

DEFAULT_LIMIT = 100
"""Steps in one page unless the query asks for another number."""

MAX_LIMIT = 1000
"""Most steps one page carries, whatever the query asks for."""

LEGACY_LIMIT = 1000
"""Steps the argument-less form answers (all of a run of up to that size)."""

STEP_STATES = ("running", "completed", "failed", "caught", "cancelled")
"""The states of step records, as the query answers and filters them."""

STATUS_WORDS = {"done": "completed or caught", "waiting": "running (a timer, a signal, a pending task)",
                "skipped": "never started: no record"}
"""``ffl status``'s words that are not states of the query, and what they are here."""


@dataclass
class StepsQuery:
    """Which steps to answer: a path prefix, a state, and a page of them."""

    prefix: str = ""
    state: str | None = None
    offset: int = 0
    limit: int = DEFAULT_LIMIT


@dataclass
class StepsPage:
    """One page of step records (path, facet, state, returns, error) and totals of the run.

    ``matched`` counts the steps the filter selects, ``next_offset`` is where
    the next page starts (None after the last), and ``counts`` holds the
    number of steps in each state in this history (``children`` hold the rest).
    """

    steps: list[dict[str, Any]] = field(default_factory=list)
    matched: int = 0
    offset: int = 0
    next_offset: int | None = None
    counts: dict[str, int] = field(default_factory=dict)
    earlier: dict[str, int] = field(default_factory=dict)
    """Steps that earlier runs of this logical run completed, restored here without a record of their own."""
    children: list[dict[str, Any]] = field(default_factory=list)
    """Child workflows running parts of this run's large foreach blocks (``workflow_id``, ``path`` of the
    foreach, ``first``/``last`` iteration, ``state``, and ``counts`` of their steps once finished); their
    steps are answered by their own ``steps`` query, under the same paths."""


class BadStepsQuery(ValueError):
    """A steps query the workflow refuses, with a message naming what was wrong."""


def steps_query(value: Any) -> StepsQuery:
    """``value`` (a StepsQuery, or its keys as JSON) checked: known keys, a known state, a usable page.

    A limit above MAX_LIMIT is cut to it; a limit under 1 or a negative offset is refused, so a client
    paging by ``next_offset`` always moves forward.
    """
    if isinstance(value, StepsQuery):
        value = {f.name: getattr(value, f.name) for f in fields(StepsQuery)}
    if not isinstance(value, dict):
        raise BadStepsQuery(f"the steps query takes a JSON object (prefix, state, offset, limit), got "
                            f"{type(value).__name__}")
    known = [f.name for f in fields(StepsQuery)]
    unknown = sorted(str(key) for key in value if key not in known)
    if unknown:
        raise BadStepsQuery(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} in the "
                            f"steps query (it takes {', '.join(known)})")
    query = StepsQuery(**value)
    if not isinstance(query.prefix, str):
        raise BadStepsQuery(f"'prefix' must be a step path such as \"b0/s1\", got {query.prefix!r}")
    if query.state is not None and query.state not in STEP_STATES:
        hint = f": ffl status's '{query.state}' is {STATUS_WORDS[query.state]}" if query.state in STATUS_WORDS \
            else ""
        raise BadStepsQuery(f"unknown state {query.state!r} (the steps query's states: {', '.join(STEP_STATES)})"
                            + hint)
    for key, least in (("offset", 0), ("limit", 1)):
        number = getattr(query, key)
        if isinstance(number, bool) or not isinstance(number, int) or number < least:
            raise BadStepsQuery(f"'{key}' must be an integer of at least {least}, got {number!r}")
    query.limit = min(query.limit, MAX_LIMIT)
    return query
