"""Deterministic document ids and millisecond timestamps for the mirror.

Every id is a UUIDv5 of the Temporal identity of what it names (workflow id,
run id, step path), so a retried activity or a replayed workflow writes the
same ``uuid`` again and the upsert lands on the same document.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

MIRROR_NAMESPACE = uuid.UUID("6f9b3c0e-4d1a-5b7e-9a2c-0f1e2d3c4b5a")
_SEP = "\x1f"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _uuid(kind: str, *parts: object) -> str:
    return str(uuid.uuid5(MIRROR_NAMESPACE, _SEP.join([kind, *(str(p) for p in parts)])))


def runner_uuid(workflow_id: str, run_id: str) -> str:
    """One runner per Temporal run."""
    return _uuid("runner", workflow_id, run_id)


def run_workflow_uuid(workflow_id: str, run_id: str) -> str:
    """The run's own ``workflows`` document, which ``runners.workflow_id`` and its steps' ``workflow_id`` name.

    One per run, as the original runtime writes one per submission, so a
    dashboard that lists a runner's steps by ``workflow_id`` never mixes runs.
    """
    return _uuid("run-workflow", workflow_id, run_id)


ROOT_PATH = ""
"""The path of a run's root step (object type Workflow); every other step descends from it."""


def step_uuid(workflow_id: str, run_id: str, path: str) -> str:
    return _uuid("step", workflow_id, run_id, path)


def root_step_uuid(workflow_id: str, run_id: str) -> str:
    return step_uuid(workflow_id, run_id, ROOT_PATH)


def task_uuid(workflow_id: str, run_id: str, activity_id: str) -> str:
    """One task per step path per run: every attempt updates the same document."""
    return _uuid("task", workflow_id, run_id, activity_id)


def log_uuid(*parts: object) -> str:
    """A log entry is named by its whole content, so writing it twice keeps one copy."""
    return _uuid("log", *parts)


def flow_uuid(program_hash: str) -> str:
    return _uuid("flow", program_hash)


def workflow_uuid(program_hash: str, qname: str) -> str:
    """The published workflow definition (one per program and workflow)."""
    return _uuid("workflow", program_hash, qname)


def namespace_uuid(program_hash: str, namespace: str) -> str:
    return flow_uuid(f"{program_hash}/{namespace}")


def facet_uuid(program_hash: str, qname: str) -> str:
    return _uuid("facet", program_hash, qname)


def to_ms(value: Any) -> int | None:
    """Milliseconds since the Unix epoch from a datetime, ISO string or number (ms).

    Naive datetimes are taken as UTC (``workflow.now()`` is UTC).
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise TypeError("a boolean is not a timestamp")
    if isinstance(value, (int, float)):
        return int(value)
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return (value - _EPOCH) // timedelta(milliseconds=1)
    raise TypeError(f"not a timestamp: {value!r}")


def now_ms() -> int:
    return (datetime.now(UTC) - _EPOCH) // timedelta(milliseconds=1)
