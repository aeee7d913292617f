"""Worker logs as a Temporal operator reads them: timestamped lines, one per failed attempt, runs' start and end.

- ``configure_logging(level)`` sets the format (``2026-12-01 23:30:00,123 WARNING temporalio.activity: …``)
  and installs the filters below on stderr.
- The SDK logs each failed activity attempt at WARNING with the whole exception chain (~30 lines, the
  handler's error twice). ``OneLinePerAttempt`` makes that one line naming attempt, facet, step, run and
  error; the traceback goes to DEBUG (and is in the failure Temporal records anyway).
- ``RunLog`` is a worker interceptor logging each run's start and end at INFO (``ffl.runs``), never
  during a replay, so a worker's log tells which runs it served.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from temporalio import workflow
from temporalio.exceptions import FailureError
from temporalio.worker import (
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from ..program.constants import CHUNK_WORKFLOW

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

runs_log = logging.getLogger("ffl.runs")


def configure_logging(level: int | str) -> None:
    """Log to stderr at ``level`` with timestamps; failed attempts on one line each."""
    logging.basicConfig(level=level, stream=sys.stderr, format=LOG_FORMAT)
    activity_logger = logging.getLogger("temporalio.activity")
    if not any(isinstance(f, OneLinePerAttempt) for f in activity_logger.filters):
        activity_logger.addFilter(OneLinePerAttempt())


class OneLinePerAttempt(logging.Filter):
    """The SDK's "Completing activity as failed" with its traceback → one line; the traceback at DEBUG."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "__temporal_error_identifier", None) != "ActivityFailure" or not record.exc_info:
            return True
        error = record.exc_info[1]
        details: dict[str, Any] = getattr(record, "temporal_activity", None) or {}
        logger = logging.getLogger(record.name)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("traceback of attempt %s of %s (%s):", details.get("attempt", "?"),
                         details.get("activity_type", "?"), details.get("activity_id", "?"),
                         exc_info=record.exc_info)
        record.msg = "%s"
        record.args = (attempt_line(details, error),)
        record.exc_info = None
        record.exc_text = None
        return True


def attempt_line(details: dict[str, Any], error: BaseException | None) -> str:
    """``attempt 2 of calc.Add failed (step b0/s of run double-21): ValueError: boom``."""
    message = (getattr(error, "message", None) or str(error)) if error is not None else ""
    kind = getattr(error, "type", None) or type(error).__name__
    facet = str(details.get("activity_type", "?"))
    first = message.splitlines()[0] if message else ""
    cause = first if kind in first else f"{kind}: {first}"
    return (f"attempt {details.get('attempt', '?')} of {facet} failed (step "
            f"{details.get('activity_id', '?')} of run {details.get('workflow_id', '?')}): {cause}")


class RunLog(Interceptor):
    """Logs each run's start and end (``ffl.runs`` at INFO); a chunk of a large foreach at DEBUG."""

    def workflow_interceptor_class(self, input: WorkflowInterceptorClassInput) -> type[WorkflowInboundInterceptor]:
        return _RunLogInbound


class _RunLogInbound(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        info = workflow.info()
        level = logging.DEBUG if info.workflow_type == CHUNK_WORKFLOW else logging.INFO
        what = f"{info.workflow_type} {info.workflow_id} (run {info.run_id}, queue {info.task_queue})"
        _say(level, f"run started: {what}")
        try:
            result = await self.next.execute_workflow(input)
        except workflow.ContinueAsNewError:
            _say(level, f"run continued as new: {what}")
            raise
        except asyncio.CancelledError:
            _say(level, f"run cancelled: {what}")
            raise
        except FailureError as err:  # fails the run (any other error fails the task, which the SDK logs)
            _say(level, f"run failed: {what}: {(err.message or type(err).__name__).splitlines()[0]}")
            raise
        _say(level, f"run completed in {_elapsed(info)}: {what}")
        return result


def _say(level: int, text: str) -> None:
    if not workflow.unsafe.is_replaying():
        runs_log.log(level, text)


def _elapsed(info: workflow.Info) -> str:
    seconds = (workflow.now() - info.start_time).total_seconds()
    return f"{seconds:.1f} s"
