"""Admission on Temporal: pacing.py's ``Admission`` with workflow time and ``ffl.Tick`` activities.

The pacing reads workflow time and the history length (the workflow task a
call happens in), both from history, so replay takes the same decisions;
when only time would admit more, a tick activity brings the next task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.constants import TICK_ACTIVITY

from .pacing import Admission


class WorkflowClock:
    """Workflow time, and the workflow task a call happens in (its history length).

    The run's ``Info`` is kept on first use: the history length is read several times a step (admission,
    the hold on new work), and a clock can be made outside a workflow, where there is no ``Info`` yet.
    """

    def __init__(self) -> None:
        self._info: workflow.Info | None = None

    def now(self) -> float:
        return workflow.now().timestamp()

    def task(self) -> int:
        if self._info is None:
            self._info = workflow.info()
        return self._info.get_current_history_length()


def ticks(options: workflow.ActivityConfig) -> Callable[[int], Awaitable[None]]:
    """The run's n-th ``ffl.Tick`` activity, whose completion brings the next workflow task."""

    async def tick(number: int) -> None:
        try:
            await workflow.execute_activity(TICK_ACTIVITY, activity_id=f"tick/{number}", **options)
        except ActivityError:
            pass  # a failed tick brings the next workflow task as well

    return tick


def workflow_admission(config: RuntimeConfig, tick: workflow.ActivityConfig,
                       hold: Callable[[], bool] | None = None) -> Admission:
    """The run's admission: its limits from ``config``, paced on workflow time."""
    return Admission.from_config(config, WorkflowClock(), ticks(tick), hold)
