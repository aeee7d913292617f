"""What ``ffl status`` says about a run: each step's true state, the failure, the exit code, JSON.

Pure functions over a ``RunView``. A step the workflow reports as running is
told apart by its pending activity: ``running on worker Y`` once a worker
picked it up, ``scheduled (no worker polling queue X)`` while none polls its
queue, ``waiting to retry`` between attempts. A step still "running" in a run
that was cancelled or terminated was cancelled with it.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any

from ..program.constants import MEMO_MIGRATED, MEMO_RESUME
from ..program.display import json_short, readable_path, short_name
from ..program.runinfo import MEMO_NAMESPACE, MEMO_SOURCES
from .run_view import Pending, RunView

EXIT_CODES = {"completed": 0, "failed": 1, "timed out": 1, "cancelled": 2, "terminated": 2, "running": 3,
              "continued as new": 3}
"""``ffl status`` exit codes by run state; 4 means the state could not be read (server, unknown run)."""

EXIT_UNKNOWN = 4

DISPLAY_STATES = ("done", "running", "waiting", "failed", "skipped", "cancelled")
"""Step states as drawn and counted: what a person needs to tell apart."""

MARKS = {"done": "✓", "running": "…", "waiting": "◷", "failed": "✗", "skipped": "-", "cancelled": "⊘"}


def exit_code(status: str) -> int:
    return EXIT_CODES.get(status, EXIT_UNKNOWN)


def _ago(when: datetime | None, now: datetime) -> str:
    if when is None:
        return ""
    seconds = max(0, int((now - when).total_seconds()))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def pending_detail(pending: Pending, now: datetime) -> tuple[str, str]:
    """(display state, detail) of a step whose handler call is pending."""
    of = f" of {pending.maximum_attempts}" if pending.maximum_attempts else ""
    attempt = f"attempt {pending.attempt}{of}"
    queue = pending.queue or "?"
    nobody = pending.pollers == []
    if pending.state == "started":
        worker = f" on worker {pending.worker}" if pending.worker else ""
        text = f"running{worker}"
        if pending.attempt > 1:
            text += f", {attempt}" + (f", last error: {pending.last_error}" if pending.last_error else "")
        return "running", text
    if pending.state == "cancel requested":
        return "running", "cancelling"
    if pending.attempt > 1:
        text = f"waiting to retry, {attempt}" + (f", last error: {pending.last_error}" if pending.last_error else "")
        if nobody:
            text += f" (no worker polling queue {queue})"
        return "waiting", text
    if nobody:
        return "waiting", f"scheduled {_ago(pending.scheduled, now)} ago (no worker polling queue {queue})"
    polling = f", {len(pending.pollers)} worker{'s' if len(pending.pollers) != 1 else ''} polling" \
        if pending.pollers else ""
    return "waiting", f"scheduled on queue {queue}{polling}"


def step_rows(view: RunView) -> list[dict[str, Any]]:
    """The steps query's records with ``display`` (one of DISPLAY_STATES) and ``detail``."""
    rows = []
    for record in view.steps or []:
        row = dict(record)
        state = str(record.get("state", ""))
        error = str(record.get("error") or "")
        detail = ""
        if state in ("completed", "caught"):
            display = "done"
            detail = "caught: " + error if state == "caught" and error else ""
        elif state == "cancelled" or (state == "failed" and "CancelledError" in error):
            display = "cancelled"
        elif state == "failed":
            display = "failed"
        elif state == "skipped":
            display = "skipped"
        elif state == "running":
            pending = view.pending.get(str(record.get("path", "")))
            if view.closed_run:
                display = "cancelled" if view.status in ("cancelled", "terminated") else "skipped"
                detail = "stopped with the run" if display == "skipped" else ""
            elif pending is not None:
                display, detail = pending_detail(pending, view.now)
                row.update(attempt=pending.attempt, maximum_attempts=pending.maximum_attempts,
                           last_error=pending.last_error, worker=pending.worker, queue=pending.queue)
                if view.progress.get(pending.path):  # the handler's last heartbeat: progress_pct/message
                    row["progress"] = view.progress[pending.path]
            elif record.get("waiting"):  # a built-in step: a timer or a wait for a signal
                display, detail = "waiting", str(record["waiting"])
                signal = view.waiting_signal(str(record.get("path", "")))
                if signal is not None:
                    detail += f" — {view.signal_command(signal)}"
            else:
                display = "running"
        else:
            display = "waiting"
        row["display"], row["detail"] = display, detail
        rows.append(row)
    return rows


def progress_text(progress: dict[str, Any]) -> str:
    """``40% waiting for the gate`` from a handler's heartbeat ``{"pct", "message"}``."""
    shown = [f"{progress['pct']}%" if progress.get("pct") is not None else "", progress.get("message") or ""]
    return " ".join(part for part in shown if part)


def counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    found = Counter(row["display"] for row in rows)
    return {state: found[state] for state in DISPLAY_STATES}


CHILD_STATES = {"completed": "done", "caught": "done", "running": "running", "failed": "failed",
                "cancelled": "cancelled"}
"""A finished child workflow's step counts (the workflow's states) as display states."""


def run_counts(view: RunView, rows: list[dict[str, Any]] | None = None) -> dict[str, int]:
    """Step counts of the logical run: the rows shown, plus the steps of child workflows that finished."""
    found = counts(step_rows(view) if rows is None else rows)
    for state, number in view.finished_children.items():
        display = CHILD_STATES.get(state)
        if display is not None:
            found[display] += number
    return found


def counts_line(found: dict[str, int]) -> str:
    text = f"steps: {found['done']} done, {found['running']} running, {found['failed']} failed"
    for state in ("waiting", "cancelled", "skipped"):
        if found.get(state):
            text += f", {found[state]} {state}"
    return text


def _parent(path: str, known: dict[str, Any]) -> str | None:
    """The nearest enclosing step: the longest other step path that prefixes this one."""
    parts = path.split("/")
    for end in range(len(parts) - 1, 0, -1):
        prefix = "/".join(parts[:end])
        if prefix in known:
            return prefix
    return None


def tree_lines(rows: list[dict[str, Any]], *, values: bool = True, root: str = "") -> list[str]:
    """One line per step, children under their step, siblings in the order they started."""
    by_path = {str(row.get("path", "")): row for row in rows}
    children: dict[str | None, list[str]] = {}
    parents: dict[str, str | None] = {}
    for path in by_path:
        parents[path] = _parent(path, by_path)
        children.setdefault(parents[path], []).append(path)
    lines: list[str] = []
    stack = [(path, 0) for path in reversed(children.get(None, []))]
    while stack:
        path, depth = stack.pop()
        row = by_path[path]
        display = row.get("display") or "running"
        parent = parents[path]
        name = readable_path(path[len(parent) + 1:] if parent else path)  # foreach[2] › who under its step
        label = f"[{display}{': ' + row['detail'] if row.get('detail') else ''}]"
        line = f"{'  ' * depth}{MARKS.get(display, '?')} {name}  {row.get('facet', '')}  {label}"
        if row.get("error") and display == "failed":
            line += f"  error: {str(row['error']).splitlines()[0]}"
        elif row.get("progress"):
            line += f"  progress: {progress_text(row['progress'])}"
        elif values and row.get("returns") is not None and display == "done":
            line += f"  -> {json_short(row['returns'])}"
        lines.append(line)
        lines.extend(f"{'  ' * (depth + 1)}warning: {warning}" for warning in row.get("warnings") or ())
        stack.extend((child, depth + 1) for child in reversed(children.get(path, [])))
    return lines


def failure_lines(view: RunView) -> list[str]:
    failure = view.failure
    if failure is None:
        return []
    if failure.step is not None:
        where = readable_path(failure.step, short_name(view.workflow))
        lines = [f"failed at step {where} ({failure.facet}): {failure.error_type}: {failure.cause}",
                 f"  step path {failure.step}"]
        lines += [f"  {line}" for line in failure.within]
        return lines
    return [f"failed: {failure.error_type + ': ' if failure.error_type and failure.error_type not in failure.message else ''}"
            f"{failure.message}"]


def render(view: RunView, *, values: bool = True) -> list[str]:
    """The text of ``ffl status``: header, program, failure, step counts and tree."""
    rows = step_rows(view)
    lines = [f"{view.workflow} {view.workflow_id} run {view.run_id}: {view.status}"]
    facts = []
    if view.program_hash:
        facts.append(f"program {view.program_hash[:12]}")
    if view.memo.get(MEMO_NAMESPACE):
        facts.append(f"namespace {view.memo[MEMO_NAMESPACE]}")
    if view.memo.get(MEMO_SOURCES):
        facts.append("sources " + ", ".join(str(s) for s in view.memo[MEMO_SOURCES]))
    if view.started is not None:
        end = view.closed or view.now
        facts.append(f"{'ran' if view.closed else 'running for'} {_ago(view.started, end)}")
    if facts:
        lines.append("  " + " · ".join(facts))
    lines += lineage_lines(view)
    lines += failure_lines(view)
    lines += [f"warning: {w.get('message')}" for w in view.warnings if not w.get("path")]  # the run's own
    if view.steps_error:
        lines.append(f"steps unknown: {view.steps_error}")
    if view.steps is not None:
        lines.append(counts_line(run_counts(view, rows)))
        lines += tree_lines(rows, values=values)
    lines += signal_lines(view)
    orphans = [p for p in view.pending.values() if p.path not in {str(r.get("path")) for r in rows}]
    for pending in orphans:
        display, detail = pending_detail(pending, view.now)
        lines.append(f"{MARKS[display]} activity {pending.facet} ({pending.path})  [{display}: {detail}]")
    return lines


def lineage(view: RunView) -> dict[str, Any] | None:
    """Where the run comes from when ffl resume or ffl migrate made it: its memo says (trusted: the run checks
    what it names before it keeps anything)."""
    resumed, moved = view.memo.get(MEMO_RESUME), view.memo.get(MEMO_MIGRATED)
    if not isinstance(resumed, dict) and not isinstance(moved, dict):
        return None
    return {"resumed_from": resumed.get("run") if isinstance(resumed, dict) else None,
            "again": list(resumed.get("from") or []) if isinstance(resumed, dict) else [],
            "program": (resumed.get("program") or None) if isinstance(resumed, dict) else None,
            "migrated_from": moved.get("from") if isinstance(moved, dict) else None}


def lineage_lines(view: RunView) -> list[str]:
    found = lineage(view)
    if found is None:
        return []
    lines = []
    if found["resumed_from"]:
        text = f"  resumed from run {found['resumed_from']} (ffl resume): same logical run, its completed steps kept"
        if found["again"]:
            text += "; run again from " + ", ".join(found["again"])
        if found["program"]:
            text += f"; with program {str(found['program'])[:12]}"
        lines.append(text)
    if found["migrated_from"]:
        lines.append(f"  moved from program {str(found['migrated_from'])[:12]} (ffl migrate)")
    return lines


def signal_lines(view: RunView) -> list[str]:
    """Signals the run keeps because no step has taken them yet (they are never dropped)."""
    kept = (view.signals or {}).get("kept") or {}
    if not kept:
        return []
    names = ", ".join(f"'{name}' ×{count}" for name, count in sorted(kept.items()))
    return [f"signals kept, no step has taken them yet: {names}"]


def _iso(when: datetime | None) -> str | None:
    return when.isoformat() if when else None


def to_json(view: RunView, *, values: bool = True) -> dict[str, Any]:
    """The machine-readable status: stable keys, states as in DISPLAY_STATES."""
    rows = step_rows(view)
    steps = []
    for row in rows:
        item = {key: row.get(key) for key in ("path", "facet", "state", "display", "detail", "error")}
        for key in ("attempt", "maximum_attempts", "last_error", "worker", "queue", "progress", "warnings"):
            if key in row:
                item[key] = row[key]
        if values:
            item["returns"] = row.get("returns")
        steps.append(item)
    failure = view.failure
    return {
        "workflow": view.workflow, "workflow_id": view.workflow_id, "run_id": view.run_id,
        "status": view.status, "exit_code": exit_code(view.status),
        "program_hash": view.program_hash or None, "namespace": view.memo.get(MEMO_NAMESPACE),
        "sources": view.memo.get(MEMO_SOURCES), "task_queue": view.task_queue, "lineage": lineage(view),
        "started": _iso(view.started), "closed": _iso(view.closed),
        "failure": None if failure is None else {
            "step": failure.step, "facet": failure.facet, "error_type": failure.error_type,
            "cause": failure.cause, "message": failure.message},
        "returns": view.returns if values else None,
        "counts": run_counts(view, rows) if view.steps is not None else None,
        "children": view.children,
        "steps": steps if view.steps is not None else None,
        "steps_error": view.steps_error,
        "signals": view.signals,
        "warnings": view.warnings,
        "pending": [{"path": p.path, "facet": p.facet, "state": p.state, "attempt": p.attempt,
                     "maximum_attempts": p.maximum_attempts, "last_error": p.last_error, "worker": p.worker,
                     "queue": p.queue, "pollers": p.pollers} for p in view.pending.values()],
    }


def dumps(view: RunView, *, values: bool = True) -> str:
    return json.dumps(to_json(view, values=values), ensure_ascii=False, sort_keys=True, default=str)
