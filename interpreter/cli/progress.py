"""Showing a run's steps: live progress on a terminal and the step tree of ``ffl status``.

Both read the workflow's "steps" query: a list of ``{path, facet, state,
returns, error}`` records. Paths nest with ``/`` (``block0/s1/foreach[3]/g``).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..program.constants import STEPS_QUERY

_MARK = {"completed": "✓", "caught": "✓", "running": "…", "failed": "✗", "created": "·"}


def counts(steps: Iterable[dict[str, Any]]) -> dict[str, int]:
    """done (completed or caught) / running / failed."""
    states = Counter(step.get("state") for step in steps)
    return {
        "done": states["completed"] + states["caught"],
        "running": states["running"],
        "failed": states["failed"],
    }


def summary_line(steps: list[dict[str, Any]]) -> str:
    c = counts(steps)
    return f"steps: {c['done']} done, {c['running']} running, {c['failed']} failed"


def _short(value: Any, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def _parent(path: str, known: dict[str, Any]) -> str | None:
    """The nearest enclosing step: the longest other step path that prefixes this one."""
    parts = path.split("/")
    for end in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:end])
        if prefix in known:
            return prefix
    return None


def step_tree_lines(steps: list[dict[str, Any]], *, values: bool = True) -> list[str]:
    """One line per step, children under their step, siblings in the order they started."""
    by_path = {str(step.get("path", "")): step for step in steps}
    children: dict[str | None, list[str]] = {}
    for path in by_path:
        children.setdefault(_parent(path, by_path), []).append(path)
    lines: list[str] = []
    stack = [(path, 0) for path in reversed(children.get(None, []))]
    while stack:
        path, depth = stack.pop()
        step = by_path[path]
        state = str(step.get("state", "?"))
        line = f"{'  ' * depth}{_MARK.get(state, '?')} {path}  {step.get('facet', '')}  [{state}]"
        if step.get("error"):
            line += f"  error: {step['error']}"
        elif step.get("progress"):  # added by ffl status from the handler's last heartbeat
            shown = [f"{step['progress']['pct']}%" if step["progress"].get("pct") is not None else "",
                     step["progress"].get("message") or ""]
            line += f"  progress: {' '.join(part for part in shown if part)}"
        elif values and step.get("returns") is not None:
            line += f"  -> {_short(step['returns'])}"
        lines.append(line)
        stack.extend((child, depth + 1) for child in reversed(children.get(path, [])))
    return lines


def _running_names(steps: list[dict[str, Any]], limit: int = 3) -> str:
    running = [f"{s.get('facet', '')} ({s.get('path', '')})" for s in steps if s.get("state") == "running"]
    extra = f" +{len(running) - limit} more" if len(running) > limit else ""
    return ", ".join(running[:limit]) + extra


async def wait_with_progress(handle, console, interval: float = 0.5) -> Any:
    """Await the run's result while a rich status line shows step counts (for terminals)."""
    result = asyncio.ensure_future(handle.result())
    with console.status(f"running {handle.id}", spinner="dots") as status:
        while not result.done():
            try:
                steps = await handle.query(STEPS_QUERY)
            except Exception:  # not started yet, or finished between polls
                steps = None
            if steps is not None:
                running = _running_names(steps)
                status.update(f"{handle.id}: {summary_line(steps)}" + (f" — {running}" if running else ""))
            await asyncio.wait({result}, timeout=interval)
    try:
        steps = await handle.query(STEPS_QUERY)
        c = counts(steps)
        style = "red" if c["failed"] else "green"
        console.print(f"[{style}]{handle.id}: {summary_line(steps)}[/{style}]")
    except Exception:
        pass
    return result.result()
