"""The mirror's MongoDB schema: collection names, indexes and state vocabularies.

Everything here follows the original FFL runtime's MongoDB schema (collections flows, workflows,
runners, steps, tasks, logs, servers). ``ensure_indexes`` creates each index
under the original schema's name, so dashboards and DAOs written for the original
runtime find the same indexes, and calling it again is harmless.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FLOWS = "flows"
WORKFLOWS = "workflows"
RUNNERS = "runners"
STEPS = "steps"
TASKS = "tasks"
LOGS = "logs"
SERVERS = "servers"

COLLECTIONS = (FLOWS, WORKFLOWS, RUNNERS, STEPS, TASKS, LOGS, SERVERS)

DEFAULT_DATABASE = "afl"
"""The original schema's database name; ``--mongo`` URIs may name another."""


@dataclass(frozen=True)
class IndexSpec:
    """One index of the original schema: name, ascending key fields, unique, partial filter."""

    collection: str
    name: str
    keys: tuple[str, ...]
    unique: bool = False
    partial: dict[str, Any] = field(default_factory=dict)

    def create_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"name": self.name}
        if self.unique:
            kwargs["unique"] = True
        if self.partial:
            kwargs["partialFilterExpression"] = dict(self.partial)
        return kwargs


INDEXES: tuple[IndexSpec, ...] = (
    IndexSpec(FLOWS, "flow_uuid_index", ("uuid",), unique=True),
    IndexSpec(FLOWS, "flow_path_index", ("name.path",)),
    IndexSpec(FLOWS, "flow_name_index", ("name.name",)),
    IndexSpec(FLOWS, "flow_name_id_index", ("name.uuid",)),
    IndexSpec(WORKFLOWS, "workflow_uuid_index", ("uuid",), unique=True),
    IndexSpec(WORKFLOWS, "workflow_name_index", ("name",)),
    IndexSpec(WORKFLOWS, "workflow_flow_id_index", ("flow_id",)),
    IndexSpec(RUNNERS, "runner_uuid_index", ("uuid",), unique=True),
    IndexSpec(RUNNERS, "runner_workflow_id_index", ("workflow_id",)),
    IndexSpec(RUNNERS, "runner_flow_id_index", ("flow_id",)),
    IndexSpec(RUNNERS, "runner_state_index", ("state",)),
    IndexSpec(STEPS, "step_uuid_index", ("uuid",), unique=True),
    IndexSpec(STEPS, "step_workflow_id_index", ("workflow_id",)),
    IndexSpec(STEPS, "step_flow_id_index", ("flow_id",)),
    IndexSpec(STEPS, "step_state_index", ("state",)),
    IndexSpec(TASKS, "task_uuid_index", ("uuid",), unique=True),
    IndexSpec(TASKS, "task_runner_id_index", ("runner_id",)),
    IndexSpec(TASKS, "task_step_id_index", ("step_id",)),
    IndexSpec(TASKS, "task_list_name_index", ("task_list_name",)),
    IndexSpec(TASKS, "task_state_index", ("state",)),
    IndexSpec(TASKS, "task_step_id_running_unique_index", ("step_id",), unique=True, partial={"state": "running"}),
    IndexSpec(LOGS, "log_uuid_index", ("uuid",), unique=True),
    IndexSpec(LOGS, "log_runner_id_index", ("runner_id",)),
    IndexSpec(LOGS, "log_object_id_index", ("object_id",)),
    IndexSpec(SERVERS, "server_uuid_index", ("uuid",), unique=True),
)


def ensure_indexes(db: Any) -> list[str]:
    """Create every index of the original schema on ``db`` (a pymongo Database); idempotent.

    Returns the index names, in the order of ``INDEXES``.
    """
    names = []
    for spec in INDEXES:
        keys = [(key, 1) for key in spec.keys]
        names.append(db[spec.collection].create_index(keys, **spec.create_kwargs()))
    return names


# --------------------------------------------------------------------------- states

RUNNER_STATES = ("created", "running", "completed", "failed", "paused", "cancelled", "unknown")
STEP_STATES = ("created", "running", "completed", "failed", "caught")
TASK_STATES = ("pending", "running", "completed", "failed", "ignored", "canceled")
SERVER_STATES = ("startup", "running", "shutdown", "error")

# A document only moves to a state of higher or equal rank (equal: newer time wins),
# so a late or replayed record never drags a finished document back to running.
RUNNER_RANK = {"unknown": -1, "created": 0, "running": 1, "paused": 1,
               "completed": 2, "failed": 2, "cancelled": 2}  # fmt: skip
STEP_RANK = {"created": 0, "running": 1, "failed": 2, "completed": 3, "caught": 3}
TASK_RANK = {"pending": 0, "running": 1, "completed": 2, "failed": 2, "ignored": 2, "canceled": 2}
SERVER_RANK = {"startup": 0, "running": 1, "error": 2, "shutdown": 3}

FINISHED_RUNNER_STATES = frozenset({"completed", "failed", "cancelled"})
FINISHED_STEP_STATES = frozenset({"completed", "failed", "caught"})
FINISHED_TASK_STATES = frozenset({"completed", "failed", "ignored", "canceled"})

STATE_ALIASES = {"canceled": "cancelled"}
"""Runner states arrive as Temporal spells them at times; tasks keep the original schema's ``canceled``."""
