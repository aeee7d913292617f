"""Runs of durable control for the release recorder: timers, signals and an update, policies, completion
from outside, and a cancellation with cleanup. Each returns the handle of a finished run to record."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle

from interpreter.activities.handlers import CompleteLater
from tests.runtime.control_harness import served, wait_for_step, waiting

SIGNALS = """
namespace rec {
    workflow Signals() => (first: Json, second: Json, late: Boolean) andThen {
        past = ffl.WaitUntil(time = "2001-01-01T00:00:00Z")
        late = ffl.WaitForSignal(name = "never", timeout_seconds = 1)
        nap = ffl.Sleep(seconds = 1) andThen {
            one = ffl.WaitForSignal(name = "go")
            two = ffl.WaitForSignal(name = "go", timeout_seconds = 60)
            yield Signals(first = one.payload, second = two.payload)
        }
        yield Signals(late = late.timed_out)
    }
}
"""

POLICIES = """
namespace rec {
    event facet Flaky(n: Long) => (n: Long) with ffl.Retry(max_attempts = 2, initial_seconds = 0.1)
    event facet Later(n: Long) => (n: Long) with ffl.Timeout(start_to_close_seconds = 60, heartbeat_seconds = 0)
    workflow Policies(n: Long) => (n: Long, later: Long) andThen {
        f = Flaky(n = $.n) with ffl.Timeout(start_to_close_seconds = 30, heartbeat_seconds = 10)
        l = Later(n = f.n)
        yield Policies(n = f.n, later = l.n)
    }
}
"""

CLEANUP = """
namespace rec {
    event facet Hold(n: Long) => (n: Long)
    event facet Undo(n: Long) => (n: Long)
    workflow Cleanup(n: Long) => (n: Long) andThen {
        h = Hold(n = $.n) catch when {
            case h.error_type == "Cancelled" => { u = Undo(n = $.n) }
            case _ => { }
        }
        yield Cleanup(n = h.n)
    }
}
"""


async def signals(client: Client, tmp: Path) -> WorkflowHandle:
    async with served(client, SIGNALS, tmp) as env:
        handle = await env.start("rec.Signals")
        await wait_for_step(handle, "b0/nap", waiting)
        await handle.signal("go", {"kept": True})  # before its wait: kept
        await handle.signal("stray", 1)  # nobody ever waits: recorded
        await wait_for_step(handle, "b0/nap/b0/two", waiting)
        await handle.execute_update("go", args=[{"via": "update"}])
        await asyncio.wait_for(handle.result(), 60)
    return handle


async def policies(client: Client, tmp: Path) -> WorkflowHandle:
    tokens: list[str] = []
    failed: list[int] = []

    def flaky(payload):
        if not failed:
            failed.append(1)
            raise RuntimeError("first attempt fails")
        return {"n": payload["n"] + 1}

    def later(payload):
        tokens.append(payload["_task_token"])
        raise CompleteLater()

    async with served(client, POLICIES, tmp, {"rec.Flaky": flaky, "rec.Later": later}) as env:
        handle = await env.start("rec.Policies", {"n": 1})
        await wait_for_step(handle, "b0/l", lambda r: r["state"] == "running" and bool(tokens))
        from interpreter.activities.payload import decode_task_token

        await client.get_async_activity_handle(task_token=decode_task_token(tokens[0])).complete({"n": 7})
        await asyncio.wait_for(handle.result(), 60)
    return handle


async def cleanup(client: Client, tmp: Path) -> WorkflowHandle:
    async def hold(payload):
        await asyncio.sleep(60)
        return {"n": payload["n"]}

    def undo(payload):
        return {"n": 0}

    async with served(client, CLEANUP, tmp, {"rec.Hold": hold, "rec.Undo": undo}) as env:
        handle = await env.start("rec.Cleanup", {"n": 1})
        await wait_for_step(handle, "b0/h", lambda r: r["state"] == "running")
        await asyncio.sleep(0.5)
        await handle.cancel()
        with contextlib.suppress(WorkflowFailureError):
            await asyncio.wait_for(handle.result(), 60)
    return handle


CASES = {"control-signals": signals, "control-policies": policies, "control-cleanup": cleanup}
