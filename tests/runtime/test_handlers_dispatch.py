"""The dynamic handler activity on a real Temporal dev server: payload extras, retries, errors."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from temporalio.client import WorkflowFailureError
from temporalio.exceptions import ApplicationError, TimeoutType
from temporalio.exceptions import TimeoutError as ActivityTimeout
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import HandlerRegistry, NonRetryableError
from interpreter.activities.listeners import CollectingListener

from .call_handler import CallHandler


async def _call(client, queue, registry, facet, payload, listeners=(), **spec) -> dict:
    activity_fn = build_handler_activity(registry, queue, listeners)
    async with Worker(
        client,
        task_queue=queue,
        workflows=[CallHandler],
        activities=[activity_fn],
        workflow_runner=UnsandboxedWorkflowRunner(),
    ):
        return await client.execute_workflow(
            "test.CallHandler",
            {"facet": facet, "payload": payload, **spec},
            id=f"test-{uuid.uuid4().hex[:8]}",
            task_queue=queue,
        )


def _app_error(exc: WorkflowFailureError) -> ApplicationError:
    cause = exc.cause
    while cause is not None and not isinstance(cause, ApplicationError):
        cause = cause.cause
    assert cause is not None, exc
    return cause


async def test_retry_extras_log_and_listener_events(temporal_client, task_queue):
    calls: list[tuple[int, bool]] = []

    def flaky(p):
        calls.append((p["_retry_count"], p["_is_retry"]))
        p["_step_log"](f"attempt {len(calls)}", level="warning")
        if len(calls) == 1:
            raise ValueError("first try fails")
        return {"sum": p["x"] + 1, "keys": sorted(p)}

    registry = HandlerRegistry()
    registry.register("t.Flaky", flaky)
    listener = CollectingListener()
    result = await _call(temporal_client, task_queue, registry, "t.Flaky", {"x": 1}, [listener], path="b0/s1")
    assert result == {"sum": 2, "keys": ["x"]}  # the extras are reachable but never iterated
    assert calls == [(0, False), (1, True)]
    states = [(e.state, e.attempt, e.error_type) for e in listener.tasks]
    assert states == [("running", 1, None), ("failed", 1, "ValueError"), ("running", 2, None), ("completed", 2, None)]
    assert listener.tasks[1].error == "first try fails"
    assert listener.tasks[-1].returns == result and listener.tasks[-1].activity_id == "b0/s1"
    assert [(e.message, e.level) for e in listener.logs] == [("attempt 1", "warning"), ("attempt 2", "warning")]


@pytest.mark.parametrize("is_async", [False, True])
async def test_heartbeat_keeps_a_slow_handler_alive(temporal_client, task_queue, is_async):
    """With a 1 s heartbeat timeout a 2.5 s handler only survives if its heartbeats reach the server."""

    def slow(p):
        for _ in range(25):
            p["_task_heartbeat"]({"progress": _})
            time.sleep(0.1)
        return {"attempt": p["_retry_count"]}

    async def slow_async(p):
        for _ in range(25):
            p["_task_heartbeat"]()
            await asyncio.sleep(0.1)
        return {"attempt": p["_retry_count"]}

    registry = HandlerRegistry()
    registry.register("t.Slow", slow_async if is_async else slow)
    result = await _call(temporal_client, task_queue, registry, "t.Slow", {}, heartbeat=1, attempts=1)
    assert result == {"attempt": 0}


async def test_heartbeat_timeout_fails_a_handler_that_stops_heartbeating(temporal_client, task_queue):
    """The control for the test above: the same slow handler, silent after its first heartbeat, times out."""

    def stalls(p):
        p["_task_heartbeat"]()
        time.sleep(2.5)
        return {}

    registry = HandlerRegistry()
    registry.register("t.Stalls", stalls)
    with pytest.raises(WorkflowFailureError) as info:
        await _call(temporal_client, task_queue, registry, "t.Stalls", {}, heartbeat=1, attempts=1)
    timeout = info.value.cause.cause
    assert isinstance(timeout, ActivityTimeout) and timeout.type == TimeoutType.HEARTBEAT


async def test_a_handler_that_never_heartbeats_is_kept_alive_by_its_worker(temporal_client, task_queue):
    """Until its first own heartbeat a handler's worker heartbeats for it: only a dead worker times out."""
    registry = HandlerRegistry()
    registry.register("t.Silent", lambda p: time.sleep(2.5) or {"done": True})
    result = await _call(temporal_client, task_queue, registry, "t.Silent", {}, heartbeat=1, attempts=1)
    assert result == {"done": True}


class BadInput(NonRetryableError):
    pass


@pytest.mark.parametrize(
    "exc, error_type",
    [(BadInput("region unknown"), "BadInput"), (ApplicationError("no way", type="Fatal", non_retryable=True), "Fatal")],
)
async def test_non_retryable_error_stops_retries(temporal_client, task_queue, exc, error_type):
    calls = []

    def fail(p):
        calls.append(1)
        raise exc

    registry = HandlerRegistry()
    registry.register("osm.Fail", fail)
    with pytest.raises(WorkflowFailureError) as info:
        await _call(temporal_client, task_queue, registry, "osm.Fail", {}, attempts=5)
    error = _app_error(info.value)
    assert len(calls) == 1
    assert error.type == error_type and error.non_retryable
    assert error.message == (exc.message if isinstance(exc, ApplicationError) else str(exc))


async def test_missing_handler_names_facet_and_queue(temporal_client, task_queue):
    registry = HandlerRegistry()
    registry.register("osm.Known", lambda p: {})
    with pytest.raises(WorkflowFailureError) as info:
        await _call(temporal_client, task_queue, registry, "osm.Unknown", {}, attempts=5)
    error = _app_error(info.value)
    assert f"no handler for osm.Unknown on queue {task_queue}" in error.message
    assert error.non_retryable and error.type == "HandlerNotFound"


async def test_non_dict_result_is_a_clear_error(temporal_client, task_queue):
    registry = HandlerRegistry()
    registry.register("t.List", lambda p: [1, 2])
    registry.register("t.None", lambda p: None)
    assert await _call(temporal_client, task_queue, registry, "t.None", {}) == {}
    with pytest.raises(WorkflowFailureError) as info:
        await _call(temporal_client, task_queue, registry, "t.List", {}, attempts=5)
    error = _app_error(info.value)
    assert error.type == "TypeError" and "returned list, expected a dict" in error.message


async def test_a_plain_handlers_timeout_error_keeps_its_own_traceback():
    """asyncio.wrap_future replaces a thread's TimeoutError by a bare copy; socket timeouts are TimeoutErrors."""
    import traceback
    from concurrent.futures import ThreadPoolExecutor

    from temporalio import activity
    from temporalio.testing import ActivityEnvironment

    from interpreter.activities.handler_calls import SyncCalls

    def fetch_tile(payload: dict) -> dict:
        raise TimeoutError("timed out") from ConnectionError("reset")

    @activity.defn(name="t.Fetch")
    async def call() -> str:
        with ThreadPoolExecutor(1) as pool:
            try:
                await SyncCalls().run(pool, fetch_tile, {})
            except TimeoutError as err:
                assert isinstance(err.__cause__, ConnectionError)
                return "".join(traceback.format_exception(err))
        return ""

    text = await ActivityEnvironment().run(call)
    assert "in fetch_tile" in text and 'raise TimeoutError("timed out")' in text
