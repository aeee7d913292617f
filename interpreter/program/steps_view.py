"""The steps query's answers, from a run's step records: pure, so the paging rules are tested alone.

A query answer over 2 MB (payload limit) or 4 MB (gRPC) fails however large
the steps' results are, so returns past a byte budget are replaced by a note.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping
from typing import Any

from .queries import LEGACY_LIMIT, MAX_LIMIT, StepsPage, StepsQuery

QUERY_RETURNS_BUDGET = 1_000_000
"""JSON bytes of step returns one steps-query answer (a page, or the argument-less list) carries at most."""


def first_records(steps: Mapping[str, dict[str, Any]], budget: int = QUERY_RETURNS_BUDGET,
                  limit: int = LEGACY_LIMIT) -> list[dict[str, Any]]:
    """The first ``limit`` step records; returns beyond ``budget`` JSON bytes in all are replaced by a note."""
    return bounded(itertools.islice(steps.values(), limit), budget)


def page_of(steps: Mapping[str, dict[str, Any]], query: StepsQuery, counts: Mapping[str, int],
            children: Mapping[str, dict[str, Any]], earlier: Mapping[str, int] | None = None,
            budget: int = QUERY_RETURNS_BUDGET) -> StepsPage:
    """The steps ``query`` selects, from its offset on, at most its limit (and MAX_LIMIT) of them."""
    offset = max(0, query.offset)
    limit = max(0, min(query.limit, MAX_LIMIT))
    if not query.prefix and query.state is None:
        matched = len(steps)
        chosen = list(itertools.islice(steps.values(), offset, offset + limit))
    else:
        selected = (r for r in steps.values() if selects(query, r))
        chosen, matched = [], 0
        for record in selected:
            if offset <= matched < offset + limit:
                chosen.append(record)
            matched += 1
    end = offset + len(chosen)
    return StepsPage(steps=bounded(chosen, budget), matched=matched, offset=offset,
                     next_offset=end if end < matched else None, counts=dict(counts), earlier=dict(earlier or {}),
                     children=[dict(record) for record in children.values() if under(query.prefix, record["path"])])


def selects(query: StepsQuery, record: dict[str, Any]) -> bool:
    """The record is in the query's state and at or under its path prefix (whole path segments)."""
    if query.state is not None and record["state"] != query.state:
        return False
    prefix = query.prefix
    if not prefix:
        return True
    path = record["path"]
    return path == prefix or path.startswith(prefix if prefix.endswith("/") else prefix + "/")


def under(prefix: str, path: str) -> bool:
    """Whether a foreach at ``path`` is within a query for ``prefix`` (or holds it: its children may)."""
    if not prefix:
        return True
    stem = prefix.rstrip("/")
    return path == stem or path.startswith(stem + "/") or stem.startswith(path + "/")


def bounded(records: Iterable[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """Copies of ``records``; returns past ``budget`` JSON bytes in all are replaced by a note."""
    out, used = [], 0
    for record in records:
        item = dict(record)
        if item["returns"] is not None:
            size = len(json.dumps(item["returns"], default=str))
            if used + size > budget:
                item["returns"] = {"_omitted": f"returns of {size} bytes left out of the steps query"}
            else:
                used += size
        out.append(item)
    return out
