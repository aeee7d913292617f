"""Hand-written Temporal workflows: what the FFL benchmark programs do, written directly with the SDK.

They call the very activities the FFL runs call (the facet names, served by
the same handler worker), with the same timeout and retry policy, so the
difference in wall time is the interpreter's.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy

OPTIONS = workflow.ActivityConfig(
    start_to_close_timeout=timedelta(seconds=300),
    retry_policy=RetryPolicy(maximum_attempts=3, initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                             maximum_interval=timedelta(seconds=30)),
)
"""The FFL default (RuntimeConfig().retry): 3 attempts, 1 s backoff doubling to 30 s, 300 s per attempt."""


@workflow.defn(name="bench.HandChain", sandboxed=False)
class HandChain:
    """``count`` activities one after the other, each given the previous one's ``i`` plus one."""

    @workflow.run
    async def run(self, args: dict[str, Any]) -> dict[str, Any]:
        value = 0
        for _ in range(args["count"]):
            result = await workflow.execute_activity(args["facet"], {"i": value}, task_queue=args["queue"], **OPTIONS)
            value = result["i"] + 1
        return {"last": value - 1}


@workflow.defn(name="bench.HandGather", sandboxed=False)
class HandGather:
    """``count`` activities at once (``asyncio.gather`` of ``execute_activity``); their ``i`` in order."""

    @workflow.run
    async def run(self, args: dict[str, Any]) -> dict[str, Any]:
        first = args.get("first", 0)
        results = await asyncio.gather(*(
            workflow.execute_activity(args["facet"], {"i": index}, task_queue=args["queue"], **OPTIONS)
            for index in range(first, first + args["count"])
        ))
        return {"out": [result["i"] for result in results]}


@workflow.defn(name="bench.HandLocalChain", sandboxed=False)
class HandLocalChain:
    """HandChain with local activities: the handler served by the workflow's own worker."""

    @workflow.run
    async def run(self, args: dict[str, Any]) -> dict[str, Any]:
        value = 0
        for _ in range(args["count"]):
            result = await workflow.execute_local_activity(
                args["facet"], {"i": value}, start_to_close_timeout=OPTIONS["start_to_close_timeout"],
                retry_policy=OPTIONS["retry_policy"])
            value = result["i"] + 1
        return {"last": value - 1}


@workflow.defn(name="bench.HandFanOut", sandboxed=False)
class HandFanOut:
    """``count`` activities in child workflows of ``per_child`` (each a HandGather), all children at once."""

    @workflow.run
    async def run(self, args: dict[str, Any]) -> dict[str, Any]:
        size = args["per_child"]
        children = [
            workflow.execute_child_workflow(
                HandGather.run, {"facet": args["facet"], "queue": args["queue"],
                                 "first": first, "count": min(size, args["count"] - first)},
                id=f"{workflow.info().workflow_id}/{first}")
            for first in range(0, args["count"], size)
        ]
        out: list[int] = []
        for result in await asyncio.gather(*children):
            out += result["out"]
        return {"out": out}


WORKFLOWS = [HandChain, HandGather, HandLocalChain, HandFanOut]
