"""The logical run a handler reports under, carried as a Temporal header from the workflow to the activity.

A child workflow (a chunk of a large foreach) or a run continued as new is
one history of a larger logical run; its handlers' task and log records must
join that run's (the mirror's task documents, the payload's ``_workflow_id``).
The workflow knows it (``Session.reported_run``); the handler side does not.
``RunHeader`` is a worker interceptor, in the SDK's style:

- workflow side: each activity (remote or local) the workflow starts carries
  the ``ffl-run`` header, ``[workflow id, run id]``, where the workflow says a
  logical run other than its own (its ``reported_run()``; the payload is
  converted once per run and identity, not per activity);
- activity side: the header is read into ``reported_run``, a context variable
  that handler dispatch (dispatch.logical_run) reads for the activity's task.

A worker built from a client of ``interpreter.cli.connect`` has it (the SDK
hands a client's worker interceptors to every worker of that client);
``worker_interceptors(client)`` gives it to a worker of any other client.
Headers are not part of the commands a replay compares, so runs recorded with
the older protocol (below) replay unchanged.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import temporalio.client
import temporalio.worker
from temporalio import activity, workflow
from temporalio.api.common.v1 import Payload

RUN_HEADER = "ffl-run"
"""Header naming the logical run, ``[workflow id, run id]`` as JSON."""

LEGACY_ARGUMENT = "_ffl_run"
"""Releases up to 0.2.0.dev3 put the same pair in the handler's arguments under this key: a task such a run
scheduled may still reach a newer handler worker (dispatch.logical_run takes it out of the arguments)."""

reported_run: ContextVar[tuple[str, str] | None] = ContextVar("ffl_reported_run", default=None)
"""The logical run the current activity's records belong to, when its header names one."""


def identity_of(value: Any) -> tuple[str, str] | None:
    """``[workflow id, run id]`` as a pair, or None for anything else (a header or argument is input)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) for part in value):
        return value[0], value[1]
    return None


class RunHeader(temporalio.client.Interceptor, temporalio.worker.Interceptor):
    """Adds the run header to the activities a workflow starts; reads it where an activity runs."""

    def workflow_interceptor_class(self, input: temporalio.worker.WorkflowInterceptorClassInput
                                   ) -> type[temporalio.worker.WorkflowInboundInterceptor]:
        return _WorkflowInbound

    def intercept_activity(self, next: temporalio.worker.ActivityInboundInterceptor
                           ) -> temporalio.worker.ActivityInboundInterceptor:
        return _ActivityInbound(next)


def worker_interceptors(client: temporalio.client.Client) -> list[temporalio.worker.Interceptor]:
    """``[RunHeader()]`` for a worker of ``client``, unless the client already hands it to its workers."""
    if any(isinstance(each, RunHeader) for each in client.config()["interceptors"]):
        return []
    return [RunHeader()]


class _WorkflowInbound(temporalio.worker.WorkflowInboundInterceptor):
    def init(self, outbound: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        super().init(_WorkflowOutbound(outbound))


class _WorkflowOutbound(temporalio.worker.WorkflowOutboundInterceptor):
    """One per workflow run: it keeps the header's payload, converted once (a chain of local activities
    starts thousands of activities with the same one)."""

    def __init__(self, next: temporalio.worker.WorkflowOutboundInterceptor) -> None:
        super().__init__(next)
        self._header: tuple[tuple[str, str], Payload] | None = None

    def start_activity(self, input: temporalio.worker.StartActivityInput) -> workflow.ActivityHandle:
        input.headers = self._with_header(input.headers)
        return super().start_activity(input)

    def start_local_activity(self, input: temporalio.worker.StartLocalActivityInput) -> workflow.ActivityHandle:
        input.headers = self._with_header(input.headers)
        return super().start_local_activity(input)

    def _with_header(self, headers: Any) -> Any:
        """``headers`` and the run header, where the workflow (FFLWorkflow) reports a run other than its own."""
        reported = getattr(workflow.instance(), "reported_run", None)
        identity = reported() if callable(reported) else None
        if identity is None:
            return headers
        if self._header is None or self._header[0] != identity:
            self._header = (identity, workflow.payload_converter().to_payload(list(identity)))
        return {**headers, RUN_HEADER: self._header[1]}


class _ActivityInbound(temporalio.worker.ActivityInboundInterceptor):
    async def execute_activity(self, input: temporalio.worker.ExecuteActivityInput) -> Any:
        token = reported_run.set(_read(input.headers.get(RUN_HEADER)))
        try:
            return await super().execute_activity(input)
        finally:
            reported_run.reset(token)


def _read(payload: Payload | None) -> tuple[str, str] | None:
    if payload is None:
        return None
    try:
        return identity_of(activity.payload_converter().from_payload(payload))
    except Exception:  # boundary: a header anyone could set; unreadable means absent (the history's own run)
        return None
