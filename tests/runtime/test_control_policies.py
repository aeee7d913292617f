"""Policies of FFL on a real dev server: retries, timeouts, heartbeats and queues as the program says."""

from __future__ import annotations

import time
import uuid

from temporalio.api.enums.v1 import TimeoutType

from .control_harness import served
from .harness import activity_records, run_ffl


def failing(times: int, attempts: list, error: type[Exception] = RuntimeError):
    def handler(payload):
        attempts.append(payload["_retry_count"])
        if len(attempts) <= times:
            raise error(f"attempt {len(attempts)} fails")
        return {"n": len(attempts)}

    return handler


RETRY = """
namespace p {
    event facet Flaky(x: Long) => (n: Long)
        with ffl.Retry(max_attempts = 3, initial_seconds = 1, backoff = 2.0, max_seconds = 10)
    event facet Strict(x: Long) => (n: Long) with ffl.Retry(max_attempts = 5, non_retryable = ["ValueError"])
    workflow Again() => (n: Long) andThen {
        f = Flaky(x = 1)
        yield Again(n = f.n)
    }
    workflow Once() => (n: Long) andThen {
        f = Flaky(x = 1) with ffl.Retry(max_attempts = 1)
        yield Once(n = f.n)
    }
    workflow Never() => (why: String) andThen {
        s = Strict(x = 1) catch { yield Never(why = s.error_type) }
    }
}
"""


async def test_a_retry_policy_sets_attempts_and_backoff_over_the_workers_config(temporal_client, tmp_path):
    """The worker's config allows one attempt (FAST_RETRY); the facet's policy three, 1 s then 2 s apart."""
    attempts: list[int] = []
    run = await run_ffl(temporal_client, RETRY, "p.Again", handlers={"p.Flaky": failing(2, attempts)},
                        tmp_path=tmp_path, timeout=60)
    assert run.error is None, run.message
    assert run.result == {"n": 3}
    assert attempts == [0, 1, 2]
    [flaky] = await activity_records(run.handle, "p.Flaky")
    policy = flaky.scheduled.retry_policy  # what Temporal was told, and so retries by
    assert (policy.maximum_attempts, policy.initial_interval.seconds, policy.backoff_coefficient,
            policy.maximum_interval.seconds) == (3, 1, 2.0, 10)
    assert flaky.started.attempt == 3 and flaky.closed == "completed"
    assert flaky.started_at - flaky.scheduled_at >= 2.9  # the third attempt began after both backoffs (1 s + 2 s)


async def test_a_calls_policy_overrides_its_facets(temporal_client, tmp_path):
    attempts: list[int] = []
    run = await run_ffl(temporal_client, RETRY, "p.Once", handlers={"p.Flaky": failing(2, attempts)},
                        tmp_path=tmp_path, timeout=60)
    assert run.error_type == "RuntimeError", run.message
    assert len(attempts) == 1


async def test_a_non_retryable_error_type_fails_the_step_at_once(temporal_client, tmp_path):
    attempts: list[int] = []
    run = await run_ffl(temporal_client, RETRY, "p.Never", handlers={"p.Strict": failing(9, attempts, ValueError)},
                        tmp_path=tmp_path, timeout=60)
    assert run.error is None, run.message
    assert run.result == {"why": "ValueError"}
    assert len(attempts) == 1


STALL = """
namespace p {
    event facet Stalls(x: Long) => (attempt: Long)
        with ffl.Retry(max_attempts = 2, initial_seconds = 0.1) with ffl.Timeout(heartbeat_seconds = 2)
    workflow Watched() => (attempt: Long) andThen {
        s = Stalls(x = 1)
        yield Watched(attempt = s.attempt)
    }
}
"""


async def test_a_heartbeat_timeout_retries_a_handler_that_stalls(temporal_client, tmp_path):
    def stalls(payload):
        payload["_task_heartbeat"](10, "started")
        if payload["_retry_count"] == 0:
            time.sleep(8)  # stuck: no heartbeat for longer than the 2 s timeout
        return {"attempt": payload["_retry_count"] + 1}

    run = await run_ffl(temporal_client, STALL, "p.Watched", handlers={"p.Stalls": stalls}, tmp_path=tmp_path,
                        timeout=60)
    assert run.error is None, run.message
    assert run.result == {"attempt": 2}
    # the stall is noticed by the heartbeat timeout, not when the stuck call ends
    [stalled] = await activity_records(run.handle, "p.Stalls")
    assert stalled.scheduled.heartbeat_timeout.seconds == 2
    assert stalled.started.attempt == 2
    assert stalled.started.last_failure.timeout_failure_info.timeout_type == TimeoutType.TIMEOUT_TYPE_HEARTBEAT


QUEUED = """
namespace p {
    event facet Render(x: Long) => (queue: String) with ffl.Queue(name = "QUEUE")
    event facet Plain(x: Long) => (queue: String)
    workflow Both() => (a: String, b: String) andThen {
        a = Render(x = 1)
        b = Plain(x = 1) with ffl.Queue(name = "QUEUE")
        yield Both(a = a.queue, b = b.queue)
    }
}
"""


async def test_a_queue_policy_sends_the_handler_to_that_queue(temporal_client, tmp_path):
    gpu = "gpu-" + uuid.uuid4().hex[:8]

    def where(payload):
        from temporalio import activity

        return {"queue": activity.info().task_queue}

    source = QUEUED.replace("QUEUE", gpu)
    async with served(temporal_client, source, tmp_path, {"p.Render": where, "p.Plain": where},
                      extra_queues=(gpu,)) as env:
        handle = await env.start("p.Both")
        assert await handle.result() == {"a": gpu, "b": gpu}
