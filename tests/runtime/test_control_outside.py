"""Steps finished from outside, and runs cancelled with cleanup, on a real dev server through the ffl command."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
import uuid

import pytest
from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError

from interpreter.activities.handlers import CompleteLater
from interpreter.program.config import RuntimeConfig

from .control_harness import served, steps_of, wait_for_step
from .harness import FAST_RETRY
from .test_workflow_runtime import ListSink


def ffl(address: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args, "--address", address], capture_output=True,
                          text=True, timeout=60)


LATER = """
namespace ext {
    event facet Translate(text: String) => (translated: String)
        with ffl.Timeout(start_to_close_seconds = 600, heartbeat_seconds = 0)
    event facet Hurried(text: String) => (translated: String)
    workflow Publish(text: String) => (text: String, problem: String) andThen {
        t = Translate(text = $.text) catch {
            yield Translate(translated = "")
            yield Publish(problem = t.error_type ++ ": " ++ t.error)
        }
        yield Publish(text = t.translated)
    }
    workflow Rushed(text: String) => (text: String) andThen {
        t = Hurried(text = $.text)
        yield Rushed(text = t.translated)
    }
}
"""


def handing_off(tokens: list[str]):
    def translate(payload):
        tokens.append(payload["_task_token"])
        raise CompleteLater("sent to the agency")

    return translate


async def _token(tokens: list[str], handle: WorkflowHandle) -> str:
    await wait_for_step(handle, "b0/t", lambda r: r["state"] == "running" and bool(tokens))
    return tokens[0]


async def test_a_step_completed_later_by_another_process(temporal_client, temporal_service, tmp_path):
    tokens: list[str] = []
    async with served(temporal_client, LATER, tmp_path, {"ext.Translate": handing_off(tokens)}) as env:
        handle = await env.start("ext.Publish", {"text": "hello"})
        token = await _token(tokens, handle)
        await asyncio.sleep(0.5)
        assert (await steps_of(handle))["b0/t"]["state"] == "running", "the step stays open after the handler"
        done = await asyncio.to_thread(ffl, temporal_service.address, "complete", token, '{"translated": "hallo"}')
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "step completed"
        assert await handle.result() == {"text": "hallo"}
        again = await asyncio.to_thread(ffl, temporal_service.address, "complete", token, "{}")
    assert again.returncode == 1 and "not found" in again.stderr, again.stderr


async def test_a_step_failed_later_by_another_process_is_caught(temporal_client, temporal_service, tmp_path):
    tokens: list[str] = []
    async with served(temporal_client, LATER, tmp_path, {"ext.Translate": handing_off(tokens)}) as env:
        handle = await env.start("ext.Publish", {"text": "hello"})
        token = await _token(tokens, handle)
        done = await asyncio.to_thread(ffl, temporal_service.address, "fail", token, "agency closed",
                                       "--type", "AgencyClosed")
        assert done.returncode == 0, done.stderr
        assert await handle.result() == {"text": "", "problem": "AgencyClosed: agency closed"}


async def test_completing_later_under_a_heartbeat_timeout_fails_saying_why(temporal_client, tmp_path):
    async with served(temporal_client, LATER, tmp_path, {"ext.Hurried": handing_off([])}) as env:
        handle = await env.start("ext.Rushed", {"text": "hello"})
        with pytest.raises(WorkflowFailureError) as failed:
            await asyncio.wait_for(handle.result(), 30)
    message = str(failed.value.cause)
    assert "CompleteLaterRefused" in message or "heartbeat timeout of 60 s" in message, message


CANCEL = """
namespace c {
    event facet Slow(n: Long) => (n: Long)
    event facet SlowSync(n: Long) => (n: Long)
    event facet Undo(what: String) => (undone: String)
    facet Both(n: Long) => (a: Long, b: Long) andThen {
        a = Slow(n = $.n) catch when {
            case a.error_type == "Cancelled" => { u = Undo(what = "a") }
            case _ => { }
        }
        b = SlowSync(n = $.n)
        yield Both(a = a.n, b = b.n)
    } catch {
        u = Undo(what = "both: " ++ $.error_type)
    }
    workflow Hold(n: Long) => (a: Long) andThen {
        both = Both(n = $.n)
        yield Hold(a = both.a)
    }
}
"""


async def test_cancelling_a_run_stops_its_handlers_runs_cleanup_and_records_cancelled(
        temporal_client, temporal_service, tmp_path):
    seen: list[str] = []
    lock = threading.Lock()

    def note(text: str) -> None:
        with lock:
            seen.append(text)

    async def slow(payload):
        note("async started")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            note("async cancelled")
            raise
        return {"n": payload["n"]}

    def slow_sync(payload):
        note("sync started")
        try:
            for _ in range(600):
                payload["_task_heartbeat"]()
                time.sleep(0.1)
        except asyncio.CancelledError:
            note("sync cancelled")
            raise
        return {"n": payload["n"]}

    def undo(payload):
        note(f"undo {payload['what']}")
        return {"undone": payload["what"]}

    sink = ListSink()
    handlers = {"c.Slow": slow, "c.SlowSync": slow_sync, "c.Undo": undo}
    config = RuntimeConfig(retry=FAST_RETRY, mirror=True)
    async with served(temporal_client, CANCEL, tmp_path, handlers, config=config, mirror=sink) as env:
        handle = await env.start("c.Hold", {"n": 1})
        for path in ("b0/both/b0/a", "b0/both/b0/b"):
            await wait_for_step(handle, path, lambda r: r["state"] == "running")
        while not {"async started", "sync started"} <= set(seen):
            await asyncio.sleep(0.1)
        done = await asyncio.to_thread(ffl, temporal_service.address, "cancel", handle.id)
        assert done.returncode == 0, done.stderr
        assert "cancel requested" in done.stdout
        with pytest.raises(WorkflowFailureError) as ended:
            await asyncio.wait_for(handle.result(), 40)
        steps = await steps_of(handle)
    assert isinstance(ended.value.cause, CancelledError)
    assert {"async cancelled", "sync cancelled"} <= set(seen), seen
    # the cancelled step's own catch, then its facet's, each ran its cleanup activity to the end
    assert [s for s in seen if s.startswith("undo")] == ["undo a", "undo both: Cancelled"], seen
    states = {path: record["state"] for path, record in steps.items()}
    assert states["b0/both/b0/a"] == "cancelled" and states["b0/both/b0/b"] == "cancelled"
    assert states["b0/both"] == "cancelled", "the enclosing step is cancelled too, not left running"
    assert states["b0/both/b0/a/catch/c0/u"] == "completed" and states["b0/both/catch/u"] == "completed"
    mirrored = {r["path"]: r["state"] for r in sink.records if r["kind"] == "step"}
    assert mirrored["b0/both"] == "cancelled" and mirrored["b0/both/b0/b"] == "cancelled"
    assert [r["state"] for r in sink.records if r["kind"] == "runner"][-1] == "cancelled"


async def test_a_second_cancel_terminates_the_run_at_once(temporal_client, temporal_service, tmp_path):
    source = """
    namespace c {
        event facet Stubborn(n: Long) => (n: Long)
        workflow Hold(n: Long) => (n: Long) andThen {
            s = Stubborn(n = $.n) catch { u = Stubborn(n = 0) }
            yield Hold(n = s.n)
        }
    }
    """

    async def stubborn(payload):
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:  # ignores cancellation: the run would wait for it
            try:
                await asyncio.sleep(deadline - time.monotonic())
            except asyncio.CancelledError:
                continue
        return {"n": 0}

    async with served(temporal_client, source, tmp_path, {"c.Stubborn": stubborn}) as env:
        handle = await env.start("c.Hold", {"n": 1})
        await wait_for_step(handle, "b0/s", lambda r: r["state"] == "running")
        first = await asyncio.to_thread(ffl, temporal_service.address, "cancel", handle.id)
        assert first.returncode == 0, first.stderr
        await asyncio.sleep(1)
        second = await asyncio.to_thread(ffl, temporal_service.address, "cancel", handle.id)
        assert second.returncode == 0, second.stderr
        assert "terminated at once" in second.stdout
        description = await handle.describe()
    assert description.status.name == "TERMINATED"


APPROVE = """
namespace c {
    workflow Approve() => (payload: Json) andThen {
        a = ffl.WaitForSignal(name = "approve")
        yield Approve(payload = a.payload)
    }
}
"""


async def test_ffl_signal_sends_signals_and_updates(temporal_client, temporal_service, tmp_path):
    address = temporal_service.address
    async with served(temporal_client, APPROVE, tmp_path) as env:
        first = await env.start("c.Approve")
        await wait_for_step(first, "b0/a", lambda r: bool(r.get("waiting")))
        refused = await asyncio.to_thread(ffl, address, "signal", first.id, "aprove", '{"ok": true}', "--wait")
        assert refused.returncode == 1
        assert "update 'aprove' refused" in refused.stderr and "no step waits for signal 'aprove'" in refused.stderr
        bad = await asyncio.to_thread(ffl, address, "signal", first.id, "approve", "{ok}")
        assert bad.returncode == 1 and "not valid JSON" in bad.stderr
        accepted = await asyncio.to_thread(ffl, address, "signal", first.id, "approve", '{"ok": true}', "--wait")
        assert accepted.returncode == 0, accepted.stderr
        assert accepted.stdout.strip() == f"update 'approve' accepted by {first.id}: step b0/a goes on"
        assert await first.result() == {"payload": {"ok": True}}
        second = await env.start("c.Approve")
        sent = await asyncio.to_thread(ffl, address, "signal", second.id, "approve", '[1, 2]')
        assert sent.returncode == 0 and sent.stdout.strip() == f"signal 'approve' sent to {second.id}"
        assert await second.result() == {"payload": [1, 2]}


async def test_ffl_signal_and_cancel_take_temporal_flags_and_say_a_finished_run_is_finished(
    temporal_client, temporal_service, tmp_path
):
    address = temporal_service.address
    async with served(temporal_client, APPROVE, tmp_path) as env:
        handle = await env.start("c.Approve")
        await wait_for_step(handle, "b0/a", lambda r: bool(r.get("waiting")))
        sent = await asyncio.to_thread(ffl, address, "signal", "--workflow-id", handle.id, "--name", "approve",
                                       "--input", '{"ok": 1}')
        assert sent.returncode == 0, sent.stderr
        assert await handle.result() == {"payload": {"ok": 1}}
        late = await asyncio.to_thread(ffl, address, "signal", "-w", handle.id, "-n", "approve", "-i", "{}")
        assert late.returncode == 1
        assert late.stderr.strip() == (f"ffl signal: run {handle.id} is not running (it is completed): a signal "
                                       "reaches only a running run")
        again = await asyncio.to_thread(ffl, address, "cancel", "--workflow-id", handle.id)
        assert again.stderr.strip() == f"ffl cancel: run {handle.id} is not running (it is completed)"
        twice = await asyncio.to_thread(ffl, address, "signal", "one", "approve", "--workflow-id", "other")
        assert twice.returncode == 2 and "workflow id given twice: 'one' and --workflow-id 'other'" in twice.stderr


async def test_a_run_started_with_two_inputs_fails_saying_so(temporal_client, tmp_path):
    """``temporal workflow start --input A --input B``: the second input was read as a continuation, and the run
    failed with ProgramNotFound for hash ''."""
    async with served(temporal_client, APPROVE, tmp_path) as env:
        handle = await temporal_client.start_workflow("c.Approve", args=[{}, {}], id=f"two-{uuid.uuid4().hex[:8]}",
                                                      task_queue=env.queue)
        with pytest.raises(WorkflowFailureError) as info:
            await handle.result()
    cause = info.value.cause
    assert cause.type == "InvalidParameters" and "ProgramNotFound" not in str(cause)
    assert cause.message.startswith("a workflow takes one input, a JSON object of parameters; this run was started "
                                    "with 2 (one --input each)")
