"""A tiny test workflow that calls one activity by name, as the interpreter does for an event facet."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy


@workflow.defn(name="test.CallHandler")
class CallHandler:
    @workflow.run
    async def run(self, spec: dict) -> dict:
        return await workflow.execute_activity(
            spec["facet"],
            spec["payload"],
            activity_id=spec.get("path", "block0/s0"),
            task_queue=spec.get("queue"),
            start_to_close_timeout=timedelta(seconds=30),
            heartbeat_timeout=timedelta(seconds=spec["heartbeat"]) if spec.get("heartbeat") else None,
            retry_policy=RetryPolicy(
                initial_interval=timedelta(milliseconds=50), maximum_attempts=spec.get("attempts", 3)
            ),
        )
