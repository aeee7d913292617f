"""One dynamic Temporal activity per queue that runs the handler named by the activity type.

The activity type is the event facet's qualified name, its single argument the
step's arguments (plus the extras of payload.py), its result the returns dict.
Sync handlers run in a thread pool (so a slow handler never blocks the
worker's event loop); async handlers run on the loop. Errors become
``ApplicationError`` whose type is the handler exception's class name, so
retry policies can name it.

A registration's ``timeout_ms`` is enforced here too (``timeouts``), so it
holds even when the interpreter worker that sets the activity's start-to-close
timeout never saw the registration; an attempt past it fails as
``HandlerTimeout`` and is retried like any failure. A sync handler's thread
cannot be stopped: its late result is dropped.

Heartbeats and cancellation. Until a handler heartbeats itself, the activity
heartbeats for it (``AUTO_HEARTBEAT_SECONDS``): its worker's death is then
noticed within the step's heartbeat timeout, and a cancellation of the step
reaches the worker (Temporal delivers it in heartbeat responses). From the
handler's first own ``_task_heartbeat()`` on, only its own heartbeats count,
so a handler that stalls fails its attempt and is retried. A cancelled
``async def`` handler sees ``asyncio.CancelledError`` where it awaits; a
plain ``def`` handler sees it raised by its next ``_task_heartbeat()``, and
gets ``CANCEL_GRACE_SECONDS`` to do so before the step is reported cancelled.

A handler that raises ``CompleteLater`` leaves its step open: Temporal's
asynchronous completion, finished with the ``_task_token`` of its payload
(``ffl complete`` / ``ffl fail``); the mirror's task document keeps the token.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from temporalio import activity
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError, CancelledError

from .handler_calls import SyncCalls, encode_returns
from .handlers import CompleteLater, HandlerRegistry, NonRetryableError, is_async_handler
from .listeners import TaskEvent, TaskListener, notify_task
from .payload import HandlerPayload, TaskIdentity, build_extras, encode_task_token
from .run_header import LEGACY_ARGUMENT, identity_of, reported_run

log = logging.getLogger(__name__)

AUTO_HEARTBEAT_SECONDS = 1.0
"""How often the activity heartbeats for a handler that has not heartbeated itself (the SDK throttles what is sent)."""

CANCEL_GRACE_SECONDS = 10.0
"""Time a cancelled plain ``def`` handler gets to see it (at its next ``_task_heartbeat()``) before the step is
reported cancelled; its thread cannot be stopped, so a handler that never heartbeats runs on, its result dropped."""

HEARTBEAT_THROTTLE = timedelta(seconds=2)
"""Most time between heartbeats a worker sends: a cancellation reaches a running handler within about this."""


def handler_worker_options() -> dict[str, Any]:
    """Options of a Worker serving handlers: heartbeats (and so cancellations) travel within HEARTBEAT_THROTTLE."""
    return {"max_heartbeat_throttle_interval": HEARTBEAT_THROTTLE,
            "default_heartbeat_throttle_interval": HEARTBEAT_THROTTLE}  # fmt: skip


class _Beats:
    """One attempt's heartbeat state: whether the handler heartbeated itself, and whether the step was cancelled."""

    def __init__(self) -> None:
        self.own = False
        self.cancelled = threading.Event()

    async def keep_alive(self, heartbeat_timeout: timedelta | None) -> None:
        """Heartbeat for the handler until its first own heartbeat, several times within a short timeout."""
        interval = AUTO_HEARTBEAT_SECONDS
        if heartbeat_timeout:
            interval = min(interval, heartbeat_timeout.total_seconds() / 4)
        while not self.own:
            activity.heartbeat()
            await asyncio.sleep(interval)

def _error(exc: BaseException) -> ApplicationError:
    """The application error a failed handler becomes: type = class name, message = the handler's own.

    The workflow phrases the step's failure around it ("step 'b0/s' (calc.Add) failed: ValueError: ..."), and
    the activity's type names the facet wherever the failure is shown; the message says it once."""
    if isinstance(exc, ApplicationError):
        return ApplicationError(
            exc.message,
            *exc.details,
            type=exc.type or type(exc).__name__,
            non_retryable=exc.non_retryable,
            next_retry_delay=exc.next_retry_delay,
        )
    return ApplicationError(_described(exc), type=type(exc).__name__, non_retryable=isinstance(exc, NonRetryableError))


def _described(exc: BaseException) -> str:
    """The exception's text; never raises, so its class name reaches the step even when its ``str()`` fails."""
    try:
        return str(exc) or repr(exc)
    except Exception as err:
        return f"(its str() raised {type(err).__name__})"


def build_handler_activity(
    registry: HandlerRegistry,
    queue: str,
    listeners: Sequence[TaskListener] = (),
    executor: Executor | None = None,
    timeouts: Mapping[str, float] | None = None,
) -> Callable:
    """The dynamic activity serving ``registry``'s handlers on ``queue``.

    ``executor`` runs sync handlers (default: a pool of 64 threads made on first use);
    ``timeouts`` (facet → seconds) limits each attempt, by default as the registrations say.
    """
    listeners = tuple(listeners)
    limits = dict(registry.timeouts() if timeouts is None else timeouts)
    pool: list[Executor] = [executor] if executor else []
    warned: set[str] = set()
    calls = SyncCalls()  # boundary: a retried step waits for its earlier call instead of taking another thread

    def get_pool() -> Executor:
        if not pool:
            pool.append(ThreadPoolExecutor(max_workers=64, thread_name_prefix=f"ffl-{queue}"))
        return pool[0]

    @activity.defn(dynamic=True)
    async def run_handler(args: Sequence[RawValue]) -> RawValue:
        info = activity.info()
        facet = info.activity_type
        converter = activity.payload_converter()
        raw = converter.from_payload(args[0].payload, dict) if args else {}
        step_args = dict(raw or {})
        workflow_id, run_id = logical_run(step_args, info)

        def task_event(state: str, **more: Any) -> TaskEvent:
            return TaskEvent(
                workflow_id=workflow_id,
                run_id=run_id,
                activity_id=info.activity_id,
                facet=facet,
                queue=queue,
                attempt=info.attempt,
                state=state,  # type: ignore[arg-type]
                payload=step_args,
                **more,
            )

        registration = registry.registration(facet)
        if registration is None:
            known = ", ".join(registry.names()) or "none"
            error = ApplicationError(
                f"no handler for {facet} on queue {queue} (registered: {known})",
                type="HandlerNotFound",
                non_retryable=True,
            )
            notify_task(listeners, task_event("failed", error=error.message, error_type=error.type))
            raise error
        fn = registration.fn

        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()
        loop_context = contextvars.copy_context()

        beats = _Beats()

        def send_heartbeat(*details: Any) -> None:
            if threading.get_ident() == loop_thread:
                beats.own = True
                if not info.is_local:  # a local activity has no heartbeats: its worker is the workflow's
                    activity.heartbeat(*details)
                return
            if beats.cancelled.is_set():  # a plain handler learns of its cancellation here
                raise asyncio.CancelledError(f"step {info.activity_id} ({facet}) was cancelled")
            beats.own = True
            if not info.is_local:  # the SDK's async-activity heartbeat must be called on the event loop
                loop.call_soon_threadsafe(lambda: activity.heartbeat(*details), context=loop_context)

        token = encode_task_token(info.task_token)
        identity = TaskIdentity(workflow_id, run_id, info.activity_id, facet, queue, info.attempt,
                                token)  # fmt: skip
        payload = HandlerPayload(step_args, build_extras(identity, registration.metadata, listeners, send_heartbeat,
                                                         activity.logger))  # fmt: skip
        limit = limits.get(facet)
        if limit is not None:
            _warn_if_cut_short(facet, limit, info.start_to_close_timeout, warned)
        notify_task(listeners, task_event("running"))
        # a local activity has no heartbeats to keep up
        keeper = None if info.is_local else asyncio.create_task(beats.keep_alive(info.heartbeat_timeout))
        plain = not is_async_handler(fn)
        try:
            async with asyncio.timeout(limit) as deadline:
                if plain:
                    thread_context = contextvars.copy_context()
                    result = await calls.run(get_pool(), thread_context.run, fn, payload)  # boundary
                else:
                    result = await fn(payload)
                if inspect.isawaitable(result):
                    result = await result
            returns = _returns(facet, result)
            encoded = encode_returns(returns)  # boundary: JSON-checked once; refused values are non-retryable
        except CompleteLater as exc:
            error = _complete_later_refused(info.heartbeat_timeout, info.is_local)
            if error is not None:
                notify_task(listeners, task_event("failed", error=error.message, error_type=error.type))
                raise error from exc
            activity.logger.info("%s completes later (%s): ffl complete TASK_TOKEN JSON finishes it", facet,
                                 exc or "no reason given")
            notify_task(listeners, task_event("running", task_token=token))
            activity.raise_complete_async()
        except asyncio.CancelledError:
            if plain:  # tell the thread (its next heartbeat raises), then give it a moment to finish
                beats.cancelled.set()
                await calls.settle(CANCEL_GRACE_SECONDS)
            notify_task(listeners, task_event("canceled"))
            raise
        except CancelledError:
            raise
        except TimeoutError as exc:
            error = _timeout(limit) if deadline.expired() else _error(exc)
            notify_task(listeners, task_event("failed", error=error.message, error_type=error.type))
            raise error from exc
        except Exception as exc:
            error = _error(exc)
            notify_task(listeners, task_event("failed", error=error.message, error_type=error.type))
            raise error from exc
        finally:
            if keeper is not None:
                keeper.cancel()
        notify_task(listeners, task_event("completed", returns=returns))
        return encoded

    return run_handler


def logical_run(step_args: dict[str, Any], info: activity.Info) -> tuple[str, str]:
    """(workflow id, run id) the step's records belong to: the logical run's, which a child workflow or a run
    continued as new names in the run header (run_header.py), else the activity's own workflow's.

    A task an older release scheduled names it in the arguments instead: taken out, so the handler never sees it.
    """
    legacy = identity_of(step_args.pop(LEGACY_ARGUMENT, None))
    named = reported_run.get() or legacy
    if named is not None:
        return named
    return info.workflow_id or "", info.workflow_run_id or ""


def _complete_later_refused(heartbeat_timeout: timedelta | None,
                            local: bool = False) -> ApplicationError | None:
    """The error for a CompleteLater that its step's heartbeat timeout would end before anyone answers, or that
    runs as a local activity (which has no task token to complete it by)."""
    if local:
        return ApplicationError(
            "the handler completes later, but the step runs as a local activity of the interpreter "
            "worker, which cannot: declare the facet with ffl.Timeout(heartbeat_seconds = 0, "
            "start_to_close_seconds = ...) or list it in the configuration's remote_facets",
            type="CompleteLaterRefused", non_retryable=True)  # fmt: skip
    if not heartbeat_timeout:
        return None
    return ApplicationError(
        f"the handler completes later, but the step has a heartbeat timeout of "
        f"{heartbeat_timeout.total_seconds():g} s, which would end it before an outside system answers: declare the "
        f"facet with ffl.Timeout(heartbeat_seconds = 0, start_to_close_seconds = ...)",
        type="CompleteLaterRefused", non_retryable=True)  # fmt: skip


def _timeout(limit: float | None) -> ApplicationError:
    return ApplicationError(f"handler exceeded its registered timeout of {int((limit or 0) * 1000)} ms",
                            type="HandlerTimeout")  # fmt: skip


def _warn_if_cut_short(facet: str, limit: float, start_to_close: Any, warned: set[str]) -> None:
    """Say once per facet when Temporal's own timeout ends attempts before the registered one."""
    if facet in warned or start_to_close is None or start_to_close.total_seconds() >= limit:
        return
    warned.add(facet)
    log.warning("%s: registered timeout_ms=%d exceeds this run's start-to-close timeout of %.0f s, which ends "
                "attempts first: load the handlers in the interpreter worker too (--handlers), or set "
                "facet_retry.%s.start_to_close_seconds in its --config", facet, int(limit * 1000),
                start_to_close.total_seconds(), facet)  # fmt: skip


def _returns(facet: str, result: Any) -> dict:
    """The handler's result as returns; raised errors get the facet prefix from ``_error``."""
    if result is None:
        return {}
    if isinstance(result, Mapping):
        return dict(result)
    raise ApplicationError(  # TypeError, as docs/language.md says: a wrong type of result
        f"handler returned {type(result).__name__}, expected a dict of returns",
        type="TypeError",
        non_retryable=True,
    )
