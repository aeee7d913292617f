"""Control of running workflows from outside: ``ffl signal``, ``ffl complete``, ``ffl fail``, ``ffl cancel``.

- ``ffl signal WORKFLOW_ID NAME [JSON]`` (or ``--workflow-id ID --name NAME --input JSON``) answers an ``ffl.WaitForSignal(name =
  NAME)`` with the payload JSON (a signal: kept by the run until a step waits
  for it); with ``--wait`` it is a Temporal update instead, which returns only
  once a waiting step has taken the payload and is refused when none waits.
- ``ffl complete TASK_TOKEN [JSON]`` / ``ffl fail TASK_TOKEN MESSAGE`` finish
  a step whose handler raised ``CompleteLater`` (the token is its payload's
  ``_task_token``), from any process.
- ``ffl cancel WORKFLOW_ID`` asks the run to cancel: handlers are told, the
  catch blocks of cancelled steps run as cleanup, the run ends cancelled. A
  second ``ffl cancel`` (or ``--now``) terminates it at once, without cleanup.

Each prints one line saying what happened and exits 0, or 1 with the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from ..activities.payload import decode_task_token
from ..program.values import ValueProblem, loads_bounded
from .connect import (
    add_connection_args,
    connect,
    core_logs_to_python_logging,
    options_from_args,
    server_error_line,
)
from .flags import FlagError, add_either, either
from .run_view import STATUS_NAMES

SECOND_CANCEL_REASON = "ffl cancel: second cancel request; ended at once, without cleanup"


class ControlError(Exception):
    """A one-line reason a control command did nothing."""


def _say(text: str) -> None:
    print(text, flush=True)


def parse_json(text: str | None, what: str) -> Any:
    """The JSON value of ``text`` (None when not given), or a ControlError naming ``what``."""
    if text is None:
        return None
    try:
        return loads_bounded(text)
    except (ValueError, ValueProblem) as err:
        raise ControlError(f"{what} is not valid JSON: {err}") from None


def _rpc_reason(error: BaseException) -> str | None:
    """A clear line for the RPC errors a control command meets, else None."""
    from temporalio.service import RPCError, RPCStatusCode

    if not isinstance(error, RPCError):
        return None
    if error.status == RPCStatusCode.NOT_FOUND:
        return f"not found: {error.message}"
    if error.status == RPCStatusCode.INVALID_ARGUMENT:
        return f"refused: {error.message}"
    return None


# --------------------------------------------------------------------------- signal


async def signal(client, workflow_id: str, name: str, payload: Any, *, wait: bool) -> str:
    """Send the signal (or, with ``wait``, the update) ``name`` with ``payload``; the line to print."""
    from temporalio.client import WorkflowUpdateFailedError
    from temporalio.service import RPCError, RPCStatusCode

    handle = client.get_workflow_handle(workflow_id)
    args = [] if payload is None else [payload]
    try:
        if not wait:
            await handle.signal(name, args=args)
            return f"signal '{name}' sent to {workflow_id}"
        accepted = await handle.execute_update(name, args=args)
    except RPCError as err:
        if err.status != RPCStatusCode.NOT_FOUND:
            raise
        state = await _closed_state(handle)
        if state is None:
            raise
        raise ControlError(f"run {workflow_id} is not running (it is {state}): a signal reaches only a running "
                           "run") from None
    except WorkflowUpdateFailedError as err:
        cause = getattr(err.cause, "message", None) or str(err.cause or err)
        raise ControlError(f"update '{name}' refused by {workflow_id}: {cause}") from None
    step = accepted.get("step") if isinstance(accepted, dict) else None
    return f"update '{name}' accepted by {workflow_id}" + (f": step {step} goes on" if step else "")


async def _closed_state(handle) -> str | None:
    """The state of a run that has closed (``completed``, ``cancelled``, …), None if it runs or is unknown."""
    try:
        description = await handle.describe()
    except Exception:  # noqa: BLE001 - no such run: the caller's error stands
        return None
    state = STATUS_NAMES.get(description.status.name, "closed") if description.status else "closed"
    return None if state == "running" else state


# --------------------------------------------------------------------------- complete / fail


async def complete(client, token_text: str, result: Any) -> str:
    handle = client.get_async_activity_handle(task_token=_token(token_text))
    await handle.complete(result if result is not None else {})
    return "step completed"


async def fail(client, token_text: str, message: str, error_type: str, retry: bool) -> str:
    from temporalio.exceptions import ApplicationError

    handle = client.get_async_activity_handle(task_token=_token(token_text))
    await handle.fail(ApplicationError(message, type=error_type, non_retryable=not retry))
    return f"step failed: {error_type}: {message}" + (" (its retry policy may run it again)" if retry else "")


def _token(text: str) -> bytes:
    try:
        return decode_task_token(text)
    except ValueError as err:
        raise ControlError(str(err)) from None


# --------------------------------------------------------------------------- cancel


async def cancel_requested(handle) -> bool:
    """Whether the run's history already holds a cancel request (read newest first)."""
    from temporalio.api.enums.v1 import EventType
    from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest

    description = await handle.describe()
    request = GetWorkflowExecutionHistoryReverseRequest(namespace=handle._client.namespace,  # noqa: SLF001
                                                        maximum_page_size=200)
    request.execution.workflow_id = handle.id
    request.execution.run_id = description.run_id
    service = handle._client.workflow_service  # noqa: SLF001
    for _ in range(50):  # a cancel request is near the end; do not read an enormous history whole
        page = await service.get_workflow_execution_history_reverse(request)
        for event in page.history.events:
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
                return True
        if not page.next_page_token:
            return False
        request.next_page_token = page.next_page_token
    return False


async def cancel(client, workflow_id: str, *, now: bool, reason: str | None) -> str:
    from temporalio.client import WorkflowExecutionStatus

    handle = client.get_workflow_handle(workflow_id)
    description = await handle.describe()
    if description.status != WorkflowExecutionStatus.RUNNING:
        name = STATUS_NAMES.get(description.status.name, "closed") if description.status else "closed"
        raise ControlError(f"run {workflow_id} is not running (it is {name})")
    if now or await cancel_requested(handle):
        await handle.terminate(reason=reason or (SECOND_CANCEL_REASON if not now else "ffl cancel --now"))
        return f"run {workflow_id} terminated at once, without cleanup"
    await handle.cancel()
    return (f"cancel requested for {workflow_id}: its handlers are told, the catch blocks of cancelled steps run as "
            "cleanup, then it ends cancelled (ffl cancel again, or --now, ends it at once)")


# --------------------------------------------------------------------------- commands


def _run(args: argparse.Namespace, work) -> int:
    core_logs_to_python_logging()
    options = options_from_args(args)

    async def main() -> str:
        client = await connect(options)
        return await work(client)

    try:
        _say(asyncio.run(main()))
        return 0
    except ControlError as err:
        print(f"ffl {args.command}: {err}", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 - one line, never a traceback
        reason = _rpc_reason(err) or server_error_line(err, options.address)
        print(f"ffl {args.command}: {reason}", file=sys.stderr, flush=True)
    return 1


def signal_cmd(args: argparse.Namespace) -> int:
    try:
        workflow_id = either(args, "workflow_id", "--workflow-id")
        name = either(args, "name", "--name")
        payload = parse_json(either(args, "payload", "--input"), "the payload")
    except FlagError as err:
        print(f"ffl signal: {err}", file=sys.stderr)
        return 2
    except ControlError as err:
        print(f"ffl signal: {err}", file=sys.stderr)
        return 1
    return _run(args, lambda client: signal(client, workflow_id, name, payload, wait=args.wait))


def complete_cmd(args: argparse.Namespace) -> int:
    try:
        result = parse_json(args.result, "the result")
    except ControlError as err:
        print(f"ffl complete: {err}", file=sys.stderr)
        return 1
    if result is not None and not isinstance(result, dict):
        print(f"ffl complete: the result must be a JSON object of the step's returns, got {json.dumps(result)}",
              file=sys.stderr)
        return 1
    return _run(args, lambda client: complete(client, args.token, result))


def fail_cmd(args: argparse.Namespace) -> int:
    return _run(args, lambda client: fail(client, args.token, args.message, args.type, args.retry))


def cancel_cmd(args: argparse.Namespace) -> int:
    try:
        workflow_id = either(args, "workflow_id", "--workflow-id")
    except FlagError as err:
        print(f"ffl cancel: {err}", file=sys.stderr)
        return 2
    return _run(args, lambda client: cancel(client, workflow_id, now=args.now, reason=args.reason))


def register(subparsers: argparse._SubParsersAction) -> None:
    sig = subparsers.add_parser(
        "signal", help="answer a waiting ffl.WaitForSignal with a JSON payload",
        description="Send the signal NAME with a JSON payload to a run: the oldest ffl.WaitForSignal(name = NAME) "
        "waiting takes it, else the run keeps it for the next one. With --wait, a Temporal update: it returns "
        "once a waiting step took the payload, and is refused when no step waits for NAME.")
    add_either(sig, "workflow_id", "WORKFLOW_ID", ("--workflow-id", "-w"), "the run")
    add_either(sig, "name", "NAME", ("--name", "-n"), "the signal's name")
    add_either(sig, "payload", "JSON", ("--input", "-i"), "the payload (default: null)", required=False)
    sig.add_argument("--wait", action="store_true", help="send an update: wait until a step accepts it")
    add_connection_args(sig)
    sig.set_defaults(func=signal_cmd)

    done = subparsers.add_parser(
        "complete", help="complete a step whose handler raised CompleteLater",
        description="Complete the step of TASK_TOKEN (its handler's payload['_task_token']) with its returns.")
    done.add_argument("token", metavar="TASK_TOKEN")
    done.add_argument("result", metavar="JSON", nargs="?", help="the step's returns as a JSON object (default {})")
    add_connection_args(done)
    done.set_defaults(func=complete_cmd)

    failed = subparsers.add_parser(
        "fail", help="fail a step whose handler raised CompleteLater",
        description="Fail the step of TASK_TOKEN with MESSAGE; its catch sees error = MESSAGE and error_type = "
        "--type.")
    failed.add_argument("token", metavar="TASK_TOKEN")
    failed.add_argument("message", metavar="MESSAGE")
    failed.add_argument("--type", default="ExternalFailure", help="error type the catch sees (default %(default)s)")
    failed.add_argument("--retry", action="store_true", help="let the step's retry policy run the handler again")
    add_connection_args(failed)
    failed.set_defaults(func=fail_cmd)

    stop = subparsers.add_parser(
        "cancel", help="cancel a run: handlers are told, catch blocks clean up, then it ends cancelled",
        description="Ask a run to cancel: running handlers see the cancellation, the catch blocks of cancelled "
        "steps run with error_type 'Cancelled', then the run ends cancelled. Asked again (or with --now), the "
        "run is terminated at once, without cleanup.")
    add_either(stop, "workflow_id", "WORKFLOW_ID", ("--workflow-id", "-w"), "the run")
    stop.add_argument("--now", action="store_true", help="terminate at once, without cleanup")
    stop.add_argument("--reason", help="the reason recorded with a termination (--now, or a second cancel); "
                      "Temporal shows it in the run's history")
    add_connection_args(stop)
    stop.set_defaults(func=cancel_cmd)
