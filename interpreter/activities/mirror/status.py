"""Read a run back from the mirror and render its step tree as indented text.

``load_run`` finds a runner by Temporal workflow id, run id, runner uuid or
its ``workflow_id`` (the latest run when a Temporal workflow id has several)
with its steps (the root step, which the header stands for, left out), tasks
and logs; ``render_run`` draws the tree: each step under its enclosing step,
in the order the steps were created, with its lifecycle (completed, failed,
...), facet, returns or error, and the retry count of its task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pymongo import MongoClient

from . import schema
from .writer import database_from_uri


@dataclass
class RunView:
    runner: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # by step_id
    logs: list[dict[str, Any]] = field(default_factory=list)


def load_run(db: Any, ref: str) -> RunView | None:
    """The run ``ref`` names (workflow id, run id or runner uuid), or None."""
    runner = db[schema.RUNNERS].find_one(
        {"$or": [{"uuid": ref}, {"temporal_run_id": ref}, {"temporal_workflow_id": ref}, {"workflow_id": ref}]},
        sort=[("start_time", -1)],
    )
    if runner is None:
        return None
    runner_id = runner["uuid"]
    steps = list(db[schema.STEPS].find({"runner_id": runner_id, "object_type": {"$ne": "Workflow"}}))
    tasks = {t["step_id"]: t for t in db[schema.TASKS].find({"runner_id": runner_id})}
    logs = list(db[schema.LOGS].find({"runner_id": runner_id}, sort=[("order", 1)]))
    return RunView(runner, steps, tasks, logs)


def fetch_run(uri: str, ref: str, database: str | None = None, timeout_ms: int = 5000) -> RunView | None:
    client: MongoClient = MongoClient(uri, serverSelectionTimeoutMS=timeout_ms)
    try:
        return load_run(client[database_from_uri(uri, database)], ref)
    finally:
        client.close()


def _json(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(", ", ": "))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        kind = f"{error['type']}: " if error.get("type") else ""
        return kind + str(error.get("message", ""))
    return str(error)


def _seconds(ms: int | None) -> str:
    return f"{(ms or 0) / 1000:.3f}s"


def _step_line(step: dict[str, Any], task: dict[str, Any] | None, values: bool = True) -> list[str]:
    name = str(step.get("path", "")).rsplit("/", 1)[-1] or step.get("path", "")
    facet = (step.get("facets") or {}).get("name")
    head = f"{name}  {step.get('object_type', '')}"
    if facet:
        head += f"  {facet}"
    head += f"  {step.get('lifecycle') or step.get('state', '')}"
    if task is not None:
        head += f"  [task {task.get('state')} on {task.get('task_list_name')}"
        if task.get("retry_count"):
            head += f", {task['retry_count']} retries"
        head += "]"
    lines = [head]
    returns = (step.get("facets") or {}).get("returns")
    if returns and values:
        lines.append(f"  -> {_json(returns)}")
    if step.get("error"):
        lines.append(f"  !! {_error_text(step['error'])}")
    return lines


def _parent_uuid(step: dict[str, Any], by_path: dict[str, dict[str, Any]], root: str) -> str:
    """The nearest enclosing step (by path prefix): blocks and branches are path segments, not steps."""
    path = str(step.get("path") or "")
    while "/" in path:
        path = path.rsplit("/", 1)[0]
        if path in by_path:
            return by_path[path]["uuid"]
    return root


def render_run(view: RunView, values: bool = True) -> str:
    """The run as indented text: runner header, then the step tree, then the log count.

    ``values`` False leaves out the steps' returns (``ffl status --brief``).
    """
    runner = view.runner
    title = runner.get("workflow_name") or (runner.get("workflow") or {}).get("name") or "?"
    lines = [f"{title}  workflow {runner.get('temporal_workflow_id')}  run {runner.get('temporal_run_id')}  "
             f"{runner.get('state')}"]
    if runner.get("state") in schema.FINISHED_RUNNER_STATES:
        lines[0] += f" in {_seconds(runner.get('duration'))}"
    if runner.get("parameters"):
        lines.append("  params  " + _json({p["name"]: p.get("value") for p in runner["parameters"]}))
    if runner.get("returns"):
        lines.append("  returns " + _json(runner["returns"]))
    if runner.get("error"):
        lines.append("  error   " + _error_text(runner["error"]))
    by_path = {step.get("path"): step for step in view.steps}
    children: dict[str, list[dict[str, Any]]] = {}
    for step in view.steps:
        children.setdefault(_parent_uuid(step, by_path, runner["uuid"]), []).append(step)
    for group in children.values():
        group.sort(key=lambda s: ((s.get("timestamp") or {}).get("created") or 0, s.get("path", "")))
    seen: set[str] = set()

    def draw(parent: str, depth: int) -> None:
        for step in children.get(parent, []):
            if step["uuid"] in seen:
                continue
            seen.add(step["uuid"])
            for i, text in enumerate(_step_line(step, view.tasks.get(step["uuid"]), values)):
                lines.append("  " * depth + ("- " if i == 0 else "  ") + text)
            draw(step["uuid"], depth + 1)

    draw(runner["uuid"], 1)
    lines.append(f"  {len(view.steps)} steps, {len(view.tasks)} tasks, {len(view.logs)} log entries")
    return "\n".join(lines)
