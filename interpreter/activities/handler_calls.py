"""How the handler activity calls a plain handler and hands its result back: one thread per step, checked.

Hooks of ``dispatch.build_handler_activity`` (marked ``# boundary`` there):

- ``SyncCalls.run`` runs a plain ``def`` handler in the worker's thread pool.
  Python cannot stop a thread, so a handler that hangs past its attempt's
  timeout keeps its thread. A retry of that step still gets a fresh call (a
  stuck connection often succeeds the second time), but no more than that:
  while a step has ``CALLS_PER_STEP`` (2) calls running on this worker, a
  further attempt *waits for the latest one* instead of starting another. So
  a hanging handler holds at most two threads per step and per worker,
  however many attempts time out, and a call that finishes late still
  answers the step. (A call still queued for a thread when its attempt ends
  is cancelled and never starts.)
- ``encode_returns`` converts the returns to their payload once, here, and
  refuses what cannot cross to the workflow — a value with no JSON form,
  NaN/Infinity, nesting past ``MAX_JSON_DEPTH``, an integer past Python's
  digit limit — as a non-retryable error: retrying cannot change it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any

from temporalio import activity
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

from ..program.values import MAX_JSON_DEPTH, scan_json

CallKey = tuple[str, str, str]
"""(workflow id, run id, activity id): one step of one run."""


CALLS_PER_STEP = 2
"""Calls of one step that may run at once on a worker: a hung one, and one retry."""


class _CarriedTimeout(Exception):
    """A handler's TimeoutError on its way out of the thread: ``asyncio.wrap_future`` would replace it by a
    new TimeoutError with the same message and no traceback (socket timeouts are TimeoutErrors)."""

    def __init__(self, error: TimeoutError):
        super().__init__(str(error))
        self.error = error


def _carrying_timeouts(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except TimeoutError as error:
        raise _CarriedTimeout(error) from None


class SyncCalls:
    """Plain handler calls running in threads, by step, so retries of a hung step do not pile up threads."""

    def __init__(self) -> None:
        self.running: dict[CallKey, list[concurrent.futures.Future]] = {}

    def _forget(self, key: CallKey, future: concurrent.futures.Future) -> None:
        calls = self.running.get(key)
        if calls is not None and future in calls:
            calls.remove(future)
            if not calls:
                del self.running[key]

    async def run(self, pool: Executor, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in ``pool`` — or, past ``CALLS_PER_STEP`` running calls of the step, the latest of them."""
        info = activity.info()
        key = (info.workflow_id or "", info.workflow_run_id or "", info.activity_id)
        calls = [f for f in self.running.get(key, []) if not f.done()]
        if len(calls) < CALLS_PER_STEP:
            future = pool.submit(_carrying_timeouts, fn, *args)
            self.running[key] = [*calls, future]
            loop = asyncio.get_running_loop()

            def forget(done: concurrent.futures.Future) -> None:  # runs in the handler's thread
                if not loop.is_closed():
                    loop.call_soon_threadsafe(self._forget, key, done)

            future.add_done_callback(forget)
        else:
            future = calls[-1]
            activity.logger.warning("attempt %d of %s waits for an earlier attempt's call, still running",
                                    info.attempt, key[2])
        try:
            return await asyncio.wrap_future(future)
        except _CarriedTimeout as carried:
            error = carried.error
        raise error  # the handler's own exception, its traceback and cause whole (raised outside the except)


    async def settle(self, timeout: float) -> None:
        """Wait up to ``timeout`` for the current step's latest call to finish (it was told to stop)."""
        info = activity.info()
        calls = self.running.get((info.workflow_id or "", info.workflow_run_id or "", info.activity_id), [])
        if calls and not calls[-1].done():
            await asyncio.wait({asyncio.wrap_future(calls[-1])}, timeout=timeout)


def encode_returns(returns: dict[str, Any]) -> RawValue:
    """The returns as the payload the workflow receives; refused (non-retryable) if they cannot get there."""
    try:
        payload = activity.payload_converter().to_payload(returns)
    except RecursionError:
        raise ApplicationError(f"handler result is nested more than {MAX_JSON_DEPTH} levels deep",
                               type="ValueError", non_retryable=True) from None
    except ValueError as err:  # e.g. an integer past Python's digit limit
        raise ApplicationError(f"handler result cannot be encoded as JSON: {err}", type="ValueError",
                               non_retryable=True) from None
    except Exception as err:  # noqa: BLE001 - any value with no JSON form
        raise ApplicationError(f"handler result has no JSON form: {type(err).__name__}: {err}", type="TypeError",
                               non_retryable=True) from None
    if payload.metadata.get("encoding") == b"json/plain":
        problem = scan_json(payload.data)
        if problem is not None:
            raise ApplicationError(f"handler result {problem}", type="ValueError", non_retryable=True)
    return RawValue(payload)
