"""The mirror's MongoDB schema: collection names, indexes and state vocabularies.

Everything here follows the original FFL runtime's MongoDB store (collections
flows, workflows, runners, steps, tasks, logs, servers, and the runtime's
step_logs). ``ensure_indexes`` creates each index under the original's name,
so the original dashboard, which creates its own indexes on start, finds
them identical instead of conflicting, and calling it again is harmless.
docs/mirror.md holds the same schema as tables; the tests compare the two.
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
STEP_LOGS = "step_logs"
SERVERS = "servers"

COLLECTIONS = (FLOWS, WORKFLOWS, RUNNERS, STEPS, TASKS, LOGS, STEP_LOGS, SERVERS)

DEFAULT_DATABASE = "facetwork"
"""The database the original runtime and its dashboard use when none is configured."""


@dataclass(frozen=True)
class IndexSpec:
    """One index of the original store: name, ascending key fields, unique, partial filter."""

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
    IndexSpec(STEP_LOGS, "step_log_uuid_index", ("uuid",), unique=True),
    IndexSpec(STEP_LOGS, "step_log_step_id_index", ("step_id",)),
    IndexSpec(STEP_LOGS, "step_log_workflow_id_index", ("workflow_id",)),
    IndexSpec(STEP_LOGS, "step_log_facet_name_index", ("facet_name",)),
    IndexSpec(SERVERS, "server_uuid_index", ("uuid",), unique=True),
)


def ensure_indexes(db: Any) -> list[str]:
    """Create every index of the original store on ``db`` (a pymongo Database); idempotent.

    Returns the index names, in the order of ``INDEXES``.
    """
    names = []
    for spec in INDEXES:
        keys = [(key, 1) for key in spec.keys]
        names.append(db[spec.collection].create_index(keys, **spec.create_kwargs()))
    return names


# --------------------------------------------------------------------------- states

RUNNER_STATES = ("created", "running", "completed", "failed", "paused", "cancelled", "unknown")
TASK_STATES = ("pending", "running", "completed", "failed", "ignored", "canceled")
SERVER_STATES = ("startup", "running", "shutdown", "error")


class StepState:
    """The original runtime's step state constants (its full vocabulary, in lifecycle order)."""

    CREATED = "state.statement.Created"
    FACET_INIT_BEGIN = "state.facet.initialization.Begin"
    FACET_INIT_END = "state.facet.initialization.End"
    FACET_SCRIPTS_BEGIN = "state.facet.scripts.Begin"
    FACET_SCRIPTS_END = "state.facet.scripts.End"
    STATEMENT_SCRIPTS_BEGIN = "state.statement.scripts.Begin"
    STATEMENT_SCRIPTS_END = "state.statement.scripts.End"
    MIXIN_BLOCKS_BEGIN = "state.mixin.blocks.Begin"
    MIXIN_BLOCKS_CONTINUE = "state.mixin.blocks.Continue"
    MIXIN_BLOCKS_END = "state.mixin.blocks.End"
    MIXIN_CAPTURE_BEGIN = "state.mixin.capture.Begin"
    MIXIN_CAPTURE_END = "state.mixin.capture.End"
    EVENT_TRANSMIT = "state.EventTransmit"
    STATEMENT_BLOCKS_BEGIN = "state.statement.blocks.Begin"
    STATEMENT_BLOCKS_CONTINUE = "state.statement.blocks.Continue"
    STATEMENT_BLOCKS_END = "state.statement.blocks.End"
    BLOCK_EXECUTION_BEGIN = "state.block.execution.Begin"
    BLOCK_EXECUTION_CONTINUE = "state.block.execution.Continue"
    BLOCK_EXECUTION_END = "state.block.execution.End"
    STATEMENT_CAPTURE_BEGIN = "state.statement.capture.Begin"
    STATEMENT_CAPTURE_END = "state.statement.capture.End"
    CATCH_BEGIN = "state.statement.catch.Begin"
    CATCH_CONTINUE = "state.statement.catch.Continue"
    CATCH_END = "state.statement.catch.End"
    STATEMENT_END = "state.statement.End"
    COMPLETE = "state.statement.Complete"
    ERROR = "state.statement.Error"


STEP_VOCABULARY = tuple(v for k, v in vars(StepState).items() if k.isupper())

LIFECYCLES = ("created", "running", "waiting", "blocks", "catching", "completed", "caught", "failed", "cancelled")
"""The interpreter's view of a step (``lifecycle``), finer than its records: ``waiting`` = its
handler's task is pending or running, ``blocks`` = its body or tail runs, ``catching`` = its
catch block runs. Each maps to one state of the original vocabulary (``step_state``)."""

FINISHED_LIFECYCLES = frozenset({"completed", "caught", "failed", "cancelled"})

_STEP_STATE = {
    "created": StepState.CREATED,
    "running": StepState.FACET_INIT_BEGIN,
    "waiting": StepState.EVENT_TRANSMIT,
    "blocks": StepState.STATEMENT_BLOCKS_CONTINUE,
    "catching": StepState.CATCH_BEGIN,
    "completed": StepState.COMPLETE,
    "caught": StepState.COMPLETE,
    "failed": StepState.ERROR,
    "cancelled": StepState.ERROR,
}
_BLOCK_STATE = {**_STEP_STATE, "running": StepState.BLOCK_EXECUTION_CONTINUE}

STEP_RANK = {"created": 0, "running": 1, "waiting": 2, "blocks": 3, "catching": 4,
             "failed": 8, "cancelled": 8, "completed": 9, "caught": 9}  # fmt: skip
"""A step document only moves to a lifecycle of higher or equal rank (equal: the newer record wins)."""

BLOCK_TYPES = frozenset({"AndThen", "AndMap", "AndWhen", "AndCatch", "Block"})
STEP_OBJECT_TYPES = ("Workflow", "VariableAssignment", "SchemaInstantiation", "YieldAssignment", *sorted(BLOCK_TYPES))


def step_state(lifecycle: str, object_type: str) -> str:
    """The original runtime's state for a step (or block) in ``lifecycle``."""
    return (_BLOCK_STATE if object_type in BLOCK_TYPES else _STEP_STATE)[lifecycle]


# A document only moves to a state of higher or equal rank (equal: newer time wins),
# so a late or replayed record never drags a finished document back to running.
RUNNER_RANK = {"unknown": -1, "created": 0, "running": 1, "paused": 1,
               "completed": 2, "failed": 2, "cancelled": 2}  # fmt: skip
TASK_RANK = {"pending": 0, "running": 1, "completed": 2, "failed": 2, "ignored": 2, "canceled": 2}
SERVER_RANK = {"startup": 0, "running": 1, "error": 2, "shutdown": 3}

FINISHED_RUNNER_STATES = frozenset({"completed", "failed", "cancelled"})
FINISHED_TASK_STATES = frozenset({"completed", "failed", "ignored", "canceled"})

RUNNER_TO_ROOT = {"created": "created", "running": "running", "paused": "running", "completed": "completed",
                  "failed": "failed", "cancelled": "cancelled", "unknown": "created"}  # fmt: skip
"""The root (Workflow) step's lifecycle follows its runner's state."""

STATE_ALIASES = {"canceled": "cancelled"}
"""Runner and step states arrive as Temporal spells them at times; tasks keep the original's ``canceled``."""
