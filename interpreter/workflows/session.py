"""The session of one history: everything a run (or a child workflow) knows once its program is loaded.

Built once, frozen, and handed to every part that needs it: the effects
layers, the children, the workflow entry points. What differs between a run
started afresh, a continued run and a child is only where the values come
from (loading.py and the entry points); what a release supports is its
``level`` (features.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.display import short_name
    from interpreter.program.model import Program
    from interpreter.semantics import Rules
    from interpreter.semantics.limits import PAYLOAD_LIMIT
    from interpreter.semantics.schedule import FOREACH_WINDOW

from .features import Level
from .options import ActivityOptions


@dataclass(frozen=True)
class Session:
    """A history's program, configuration and identity; ``workflow_id``/``run_id`` are the logical run's."""

    workflow_name: str  # the FFL workflow's qualified name (a child loads its program by hash)
    program: Program
    program_hash: str
    config: RuntimeConfig
    level: Level
    workflow_id: str
    run_id: str
    queue: str  # the interpreter's task queue, which its own activities use too
    options: ActivityOptions
    rules: Rules

    @classmethod
    def open(cls, workflow_name: str, program: Program, program_hash: str, config: RuntimeConfig, level: Level,
             identity: tuple[str, str], queue: str, depth_base: int = 0) -> Session:
        scale = level >= Level.SCALE
        rules = Rules(cleanup_on_cancel=level >= Level.CONTROL, seed_lifecycle=level >= Level.LIFECYCLE,
                      integral_doubles=level >= Level.LIFECYCLE, type_checks=config.type_checks,
                      value_limit=config.max_value_bytes if scale else PAYLOAD_LIMIT,  # by reference since SCALE
                      max_nesting=config.max_nesting_depth, depth_base=depth_base,
                      foreach_window=max(FOREACH_WINDOW, config.max_pending_activities))
        return cls(workflow_name, program, program_hash, config, level, identity[0], identity[1], queue,
                   ActivityOptions(program, config, queue, level >= Level.CONTROL), rules)

    def reported_run(self) -> tuple[str, str] | None:
        """The logical run this history's handlers report under in a mirrored run, where it is not the
        history's own (a child, a continued run): the run header carries it to them (activities/run_header.py)."""
        info = workflow.info()
        identity = (self.workflow_id, self.run_id)
        return identity if self.config.mirror and identity != (info.workflow_id, info.run_id) else None

    @property
    def root(self) -> str:
        """The workflow's short name, leading readable paths in summaries."""
        return short_name(self.workflow_name)
