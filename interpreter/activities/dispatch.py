"""One dynamic Temporal activity per queue that runs the handler named by the activity type.

The activity type is the event facet's qualified name, its single argument the
step's arguments, its result the returns dict. Sync handlers run in a thread
pool (so a slow handler never blocks the worker's event loop); async handlers
run on the loop. Errors become ``ApplicationError`` whose type is the handler
exception's class name, so retry policies can name it.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from temporalio import activity
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError, CancelledError

from .handlers import HandlerRegistry, NonRetryableError, is_async_handler
from .listeners import LogEvent, TaskEvent, TaskListener, notify_log, notify_task

EXTRA_KEYS = ("_step_log", "_task_heartbeat", "_retry_count", "_is_retry")


class HandlerPayload(dict):
    """The step's arguments, plus runtime extras reachable by key but never iterated.

    ``payload["_step_log"]``, ``payload.get("_retry_count")`` and ``"_is_retry" in
    payload`` work, while ``dict(payload)``, ``json.dumps(payload)`` or iterating
    it see only the arguments, so a handler that echoes its payload returns
    clean, serialisable data.
    """

    def __init__(self, args: Mapping[str, Any], extras: Mapping[str, Any]) -> None:
        super().__init__(args)
        self._extras = dict(extras)

    def __missing__(self, key: str) -> Any:
        if key in self._extras:
            return self._extras[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        if dict.__contains__(self, key):
            return dict.__getitem__(self, key)
        return self._extras.get(key, default)

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self._extras


def _level(level: str | int) -> int:
    if isinstance(level, int):
        return level
    value = logging.getLevelName(str(level).upper())
    return value if isinstance(value, int) else logging.INFO


def _error(facet: str, exc: BaseException) -> ApplicationError:
    """The application error a failed handler becomes: type = class name, message names the facet."""
    if isinstance(exc, ApplicationError):
        return ApplicationError(
            f"{facet}: {exc.message}",
            *exc.details,
            type=exc.type or type(exc).__name__,
            non_retryable=exc.non_retryable,
            next_retry_delay=exc.next_retry_delay,
        )
    cause = str(exc) or repr(exc)
    return ApplicationError(
        f"{facet}: {cause}", type=type(exc).__name__, non_retryable=isinstance(exc, NonRetryableError)
    )


def build_handler_activity(
    registry: HandlerRegistry,
    queue: str,
    listeners: Sequence[TaskListener] = (),
    executor: Executor | None = None,
) -> Callable:
    """The dynamic activity serving ``registry``'s handlers on ``queue``.

    ``executor`` runs sync handlers (default: a pool of 64 threads made on first use).
    """
    listeners = tuple(listeners)
    pool: list[Executor] = [executor] if executor else []

    def get_pool() -> Executor:
        if not pool:
            pool.append(ThreadPoolExecutor(max_workers=64, thread_name_prefix=f"ffl-{queue}"))
        return pool[0]

    @activity.defn(dynamic=True)
    async def run_handler(args: Sequence[RawValue]) -> dict:
        info = activity.info()
        facet = info.activity_type
        converter = activity.payload_converter()
        raw = converter.from_payload(args[0].payload, dict) if args else {}
        step_args = dict(raw or {})

        def task_event(state: str, **more: Any) -> TaskEvent:
            return TaskEvent(
                workflow_id=info.workflow_id or "",
                run_id=info.workflow_run_id or "",
                activity_id=info.activity_id,
                facet=facet,
                queue=queue,
                attempt=info.attempt,
                state=state,  # type: ignore[arg-type]
                payload=step_args,
                **more,
            )

        fn = registry.lookup(facet)
        if fn is None:
            known = ", ".join(registry.names()) or "none"
            error = ApplicationError(
                f"no handler for {facet} on queue {queue} (registered: {known})",
                type="HandlerNotFound",
                non_retryable=True,
            )
            notify_task(listeners, task_event("failed", error=error.message, error_type=error.type))
            raise error

        loop = asyncio.get_running_loop()
        loop_thread = threading.get_ident()
        loop_context = contextvars.copy_context()

        def step_log(message: str, level: str | int = "info") -> None:
            activity.logger.log(_level(level), "%s", message)
            level_name = level if isinstance(level, str) else logging.getLevelName(level).lower()
            notify_log(
                listeners,
                LogEvent(
                    workflow_id=info.workflow_id or "",
                    run_id=info.workflow_run_id or "",
                    activity_id=info.activity_id,
                    facet=facet,
                    message=str(message),
                    level=level_name,
                ),
            )

        def heartbeat(details: Any = None) -> None:
            extra = () if details is None else (details,)
            if threading.get_ident() == loop_thread:
                activity.heartbeat(*extra)
            else:  # the SDK's async-activity heartbeat must be called on the event loop
                loop.call_soon_threadsafe(lambda: activity.heartbeat(*extra), context=loop_context)

        payload = HandlerPayload(
            step_args,
            {
                "_step_log": step_log,
                "_task_heartbeat": heartbeat,
                "_retry_count": info.attempt - 1,
                "_is_retry": info.attempt > 1,
            },
        )
        notify_task(listeners, task_event("running"))
        try:
            if is_async_handler(fn):
                result = await fn(payload)
            else:
                thread_context = contextvars.copy_context()
                result = await loop.run_in_executor(get_pool(), thread_context.run, fn, payload)
            if inspect.isawaitable(result):
                result = await result
            returns = _returns(facet, result)
        except CancelledError:
            raise
        except Exception as exc:
            error = _error(facet, exc)
            notify_task(listeners, task_event("failed", error=error.message, error_type=error.type))
            raise error from exc
        notify_task(listeners, task_event("completed", returns=returns))
        return returns

    return run_handler


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
