"""How many tasks a worker takes at once: the SDK's slot options, with workflow tasks sized by what the machine has.

An interpreter worker takes a workflow task only when it can run it soon.
With the SDK's default of 100 workflow-task slots a busy worker polls every
task it is offered, and each waits inside the process for the one Python
thread that runs workflow code: the server counts it as held all that time,
buffers the run's new events behind it (and force-closes it past 100), and
schedules one more task for every few completions. With few slots a task
waits on the server's side instead, where it gathers every completion that
arrives meanwhile: fewer, fuller tasks, less work for the server.
docs/performance.md has the figures (a 20,000-item foreach of remote no-op
handlers: 122–128 items/s with 100 slots, 162–169 with two).

Few slots are wrong where a task waits rather than computes: a task of local
activities holds its slot until they finish, so sixteen runs of handlers
that sleep would queue behind two slots. So the workflow slots follow the
machine (the SDK's resource-based supplier): at least ``MIN_WORKFLOW_SLOTS``,
more while CPU and memory are below ``TARGET_CPU``/``TARGET_MEMORY``. A fixed
number (``--max-concurrent-workflow-tasks``) replaces that.
"""

from __future__ import annotations

from typing import Any

from temporalio.worker import (
    FixedSizeSlotSupplier,
    ResourceBasedSlotConfig,
    ResourceBasedSlotSupplier,
    ResourceBasedTunerConfig,
    WorkerTuner,
)

MIN_WORKFLOW_SLOTS = 2
"""Workflow tasks always allowed at once: one for the sticky queue's poll and one for the shared queue's (with
one slot, the worker polls one queue while its runs' tasks wait on the other)."""

MAX_WORKFLOW_SLOTS = 100
"""The most workflow tasks at once, however idle the machine: the SDK's fixed default."""

TARGET_CPU = 0.8
"""System CPU use (0–1) above which the worker takes no workflow task beyond the minimum."""

TARGET_MEMORY = 0.8
"""System memory use (0–1) likewise."""

SDK_DEFAULT_SLOTS = 100
"""Activity and local-activity slots unless given: the SDK's default."""


def slot_options(max_concurrent_activities: int | None = None,
                 max_concurrent_workflow_tasks: int | None = None) -> dict[str, Any]:
    """Keyword arguments of ``Worker`` for its slots: ``max_concurrent_activities`` activity slots (the SDK's
    100 unless given), and ``max_concurrent_workflow_tasks`` workflow-task slots, or as the machine allows."""
    activities = FixedSizeSlotSupplier(max_concurrent_activities or SDK_DEFAULT_SLOTS)
    if max_concurrent_workflow_tasks is not None:
        if max_concurrent_workflow_tasks < MIN_WORKFLOW_SLOTS:
            raise ValueError(f"max_concurrent_workflow_tasks must be at least {MIN_WORKFLOW_SLOTS} (one for each "
                             f"of the worker's two workflow queues), not {max_concurrent_workflow_tasks}")
        workflows: Any = FixedSizeSlotSupplier(max_concurrent_workflow_tasks)
    else:
        workflows = ResourceBasedSlotSupplier(
            ResourceBasedSlotConfig(minimum_slots=MIN_WORKFLOW_SLOTS, maximum_slots=MAX_WORKFLOW_SLOTS),
            ResourceBasedTunerConfig(target_memory_usage=TARGET_MEMORY, target_cpu_usage=TARGET_CPU))
    return {"tuner": WorkerTuner.create_composite(
        workflow_supplier=workflows, activity_supplier=activities,
        local_activity_supplier=FixedSizeSlotSupplier(SDK_DEFAULT_SLOTS),
        nexus_supplier=FixedSizeSlotSupplier(SDK_DEFAULT_SLOTS))}
