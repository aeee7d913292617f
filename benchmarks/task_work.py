"""The workflow's own work in each workflow task, timed while a history replays.

A task's duration in the history is wall time on the server's clock: it
includes the time a task waits for the worker and, for local activities, the
activities themselves (the SDK keeps a task open while they run and only
heartbeats it at 80 % of the task timeout, so a chain of local activities has
8 s tasks however little the workflow does). What a slow machine risks is the
workflow's own work in one task, which must finish within the task timeout
(10 s by default) and, per activation, within the SDK's 2 s deadlock
detector. ``TimedRunner`` measures that: it times every activation of a
replay and adds up those of one task (activations of one task share the
history length they report).
"""

from __future__ import annotations

import time
from collections import defaultdict

from temporalio.bridge.proto.workflow_activation import WorkflowActivation
from temporalio.bridge.proto.workflow_completion import WorkflowActivationCompletion
from temporalio.worker import UnsandboxedWorkflowRunner
from temporalio.worker._workflow_instance import WorkflowInstance, WorkflowInstanceDetails


class _TimedInstance(WorkflowInstance):
    """A workflow instance whose activations are timed into ``seconds[(run_id, history_length)]``."""

    def __init__(self, inner: WorkflowInstance, run_id: str, seconds: dict[tuple[str, int], float],
                 longest: list[float]):
        self.inner, self.run_id, self.seconds, self.longest = inner, run_id, seconds, longest

    def activate(self, act: WorkflowActivation) -> WorkflowActivationCompletion:
        began = time.perf_counter()
        try:
            return self.inner.activate(act)
        finally:
            spent = time.perf_counter() - began
            self.seconds[(self.run_id, act.history_length)] += spent
            self.longest[0] = max(self.longest[0], spent)

    def get_serialization_context(self, command_info):  # noqa: ANN001, ANN201 - the SDK's signature
        return self.inner.get_serialization_context(command_info)

    def get_external_store_context(self, command_info):  # noqa: ANN001, ANN201 - the SDK's signature
        return self.inner.get_external_store_context(command_info)

    def get_info(self):  # noqa: ANN201 - the SDK's signature
        return self.inner.get_info()

    def get_thread_id(self) -> int | None:
        return self.inner.get_thread_id()


class TimedRunner(UnsandboxedWorkflowRunner):
    """The worker's unsandboxed runner, timing the workflow's work per workflow task and per activation."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: dict[tuple[str, int], float] = defaultdict(float)
        self._longest = [0.0]

    def create_instance(self, det: WorkflowInstanceDetails) -> WorkflowInstance:
        return _TimedInstance(super().create_instance(det), det.info.run_id, self.seconds, self._longest)

    @property
    def longest_task(self) -> float:
        """Seconds of the workflow's own work in its busiest workflow task."""
        return max(self.seconds.values(), default=0.0)

    @property
    def longest_activation(self) -> float:
        """Seconds of the longest single activation (the SDK's deadlock detector allows 2)."""
        return self._longest[0]
