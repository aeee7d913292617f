"""The workflow's side of the typed boundaries: what the runner calls where values enter a run.

Each function is a one-line hook at its call site (marked ``# boundary``):

- ``decode_inputs``: the run's input payload, refused before it is decoded
  when it is too deep, holds NaN/Infinity or an over-long integer (Python's
  decoder would raise inside the workflow task, failing it forever);
- ``check_input_size``: the workflow's parameters against the value limit
  (their types are the language's: Interpreter.workflow_params);
- ``schedule_to_start`` / ``timeout_message``: the optional per-facet
  schedule-to-start timeout, reported with the queue that had no worker.

The checks themselves are the pure functions of ``interpreter.program.values``; a handler's returns and
the nesting bound are the language's (interpreter.semantics).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError, TimeoutType

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RetryConfig
    from interpreter.program.model import FacetDecl
    from interpreter.program.values import scan_json
    from interpreter.semantics.limits import oversize, too_large

_JSON_ENCODINGS = (b"json/plain",)


def _invalid(message: str) -> ApplicationError:
    return ApplicationError(message, type="InvalidParameters", non_retryable=True)


def decode_inputs(args: Sequence[RawValue]) -> dict[str, Any]:
    """The run's parameters from its raw input, refused with a clear error before decoding if unsafe."""
    if not args:
        return {}
    payload = args[0].payload
    if payload.metadata.get("encoding") in _JSON_ENCODINGS:
        problem = scan_json(payload.data)
        if problem is not None:
            raise _invalid(f"workflow input {problem}")
    try:
        value = workflow.payload_converter().from_payload(payload, None)
    except Exception as err:  # not JSON, an unknown encoding (KeyError), past what the scan looks for ...
        raise _invalid(f"workflow input cannot be decoded: {type(err).__name__}: {err}"[:2000]) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _invalid(f"workflow input must be one JSON object of parameters, got {type(value).__name__}")
    return value


def check_input_size(decl: FacetDecl, params: dict[str, Any], limit: int) -> None:
    """Fail the run at once when its input is over the value limit (not only later, at its returns)."""
    size = oversize(params, limit)
    if size is not None:
        raise ApplicationError(f"workflow '{decl.qname}': {too_large('its parameters', size, limit)}",
                               type="PayloadTooLarge", non_retryable=True)


def schedule_to_start(retry: RetryConfig) -> timedelta | None:
    seconds = retry.schedule_to_start_seconds
    return timedelta(seconds=seconds) if seconds else None


def heartbeat(retry: RetryConfig) -> timedelta | None:
    seconds = retry.heartbeat_seconds
    return timedelta(seconds=seconds) if seconds else None


def activity_failure(err: ActivityError) -> tuple[str, str]:
    """(message, type name) of the cause of a failed activity."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return cause.message, cause.type or "ApplicationError"
    if isinstance(cause, TimeoutError):
        return f"activity timed out ({cause.type.name if cause.type else 'timeout'})", "TimeoutError"
    if cause is not None:
        return str(cause) or type(cause).__name__, type(cause).__name__
    return str(err), "ActivityError"


def timeout_message(err: ActivityError, queue: str, retry: RetryConfig) -> str | None:
    """A clear message for an activity no worker picked up, or that stopped heartbeating; else None."""
    cause = err.cause
    if not isinstance(cause, TimeoutError):
        return None
    if cause.type == TimeoutType.SCHEDULE_TO_START:
        return (f"no worker picked the task up from queue '{queue}' within "
                f"{retry.schedule_to_start_seconds:g} s (is a worker serving that queue running?)")
    if cause.type == TimeoutType.HEARTBEAT:
        return f"the worker running it stopped heartbeating for {retry.heartbeat_seconds:g} s (did it die?)"
    return None
