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

from dataclasses import dataclass, field
from typing import Any

DEFAULT_LIMIT = 100
"""Steps in one page unless the query asks for another number."""

MAX_LIMIT = 1000
"""Most steps one page carries, whatever the query asks for."""

LEGACY_LIMIT = 1000
"""Steps the argument-less form answers (all of a run of up to that size)."""


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
    children: list[dict[str, Any]] = field(default_factory=list)
    """Child workflows running parts of this run's large foreach blocks (``workflow_id``, ``path`` of the
    foreach, ``first``/``last`` iteration, ``state``, and ``counts`` of their steps once finished); their
    steps are answered by their own ``steps`` query, under the same paths."""
