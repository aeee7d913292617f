"""Timers, signals and updates on Temporal's time-skipping test server: waits that would take hours take seconds."""

from __future__ import annotations

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowUpdateFailedError

from .control_harness import served, steps_of, wait_for_step, waiting
from .harness import run_ffl

TIMERS = """
namespace t {
    workflow Nap(hours: Double) => (woke: Boolean) andThen {
        past = ffl.WaitUntil(time = "2001-01-01T00:00:00")
        nap = ffl.Sleep(seconds = $.hours * 3600) andThen {
            later = ffl.WaitUntil(time = "2000-01-01T00:00:00+02:00")
            yield Nap(woke = true)
        }
    }
}
"""

APPROVE = """
namespace t {
    uses ffl
    workflow Approve(timeout: Double = null) => (payload: Json, late: Boolean) andThen {
        a = WaitForSignal(name = "approve", timeout_seconds = $.timeout)
        yield Approve(payload = a.payload, late = a.timed_out)
    }
    workflow AfterNap() => (first: Json, second: Json) andThen {
        nap = ffl.Sleep(seconds = 600) andThen {
            one = ffl.WaitForSignal(name = "go")
            two = ffl.WaitForSignal(name = "go")
            yield AfterNap(first = one.payload, second = two.payload)
        }
    }
}
"""


async def test_an_hour_long_sleep_finishes_in_seconds_of_test_time(time_skipping, tmp_path):
    run = await run_ffl(time_skipping.client, TIMERS, "t.Nap", {"hours": 1}, tmp_path=tmp_path, timeout=60)
    assert run.error is None, run.message
    assert run.result == {"woke": True}
    # within the minute run_ffl waits, the server skipped the hour its history shows the timer take
    history = await run.handle.fetch_history()
    timers = {e.timer_started_event_attributes.timer_id: e for e in history.events
              if e.event_type == EventType.EVENT_TYPE_TIMER_STARTED}
    [(started, fired)] = [(timers[e.timer_fired_event_attributes.timer_id], e) for e in history.events
                          if e.event_type == EventType.EVENT_TYPE_TIMER_FIRED]
    assert started.timer_started_event_attributes.start_to_fire_timeout.seconds == 3600
    assert fired.event_time.seconds - started.event_time.seconds >= 3600
    states = {s["path"]: s["state"] for s in run.steps}
    assert states == {"b0/past": "completed", "b0/nap": "completed", "b0/nap/b0/later": "completed"}


async def test_a_signal_resumes_a_waiting_run_with_its_payload(time_skipping, tmp_path):
    async with served(time_skipping.client, APPROVE, tmp_path) as env:
        handle = await env.start("t.Approve", {"timeout": 86400})
        record = await wait_for_step(handle, "b0/a", waiting)
        assert record["waiting"] == "waiting for signal 'approve' (up to 1 d)"
        await shows_the_wait(time_skipping.client, handle)
        await handle.signal("approve", {"by": "ada", "ok": True})
        assert await handle.result() == {"payload": {"by": "ada", "ok": True}, "late": False}
        signals = await handle.query("signals")
    assert [(r["name"], r["state"], r["step"]) for r in signals["received"]] == [("approve", "taken", "b0/a")]


async def test_a_wait_times_out_and_says_so(time_skipping, tmp_path):
    run = await run_ffl(time_skipping.client, APPROVE, "t.Approve", {"timeout": 7200}, tmp_path=tmp_path,
                        timeout=60)
    assert run.error is None, run.message
    assert run.result == {"payload": None, "late": True}


async def test_signals_sent_before_their_waits_are_kept_and_taken_in_order(time_skipping, tmp_path):
    async with served(time_skipping.client, APPROVE, tmp_path) as env:
        handle = await env.start("t.AfterNap")
        await wait_for_step(handle, "b0/nap", waiting)  # asleep: nobody waits for "go" yet
        await handle.signal("go", 1)
        await handle.signal("go", 2)
        await handle.signal("stray", {"x": 1})
        kept = await handle.query("signals")
        assert kept["kept"] == {"go": 2, "stray": 1} and kept["waiting"] == {}
        assert await handle.result() == {"first": 1, "second": 2}
        signals = await handle.query("signals")
    assert [(r["name"], r["state"], r["step"]) for r in signals["received"]] == [
        ("go", "taken", "b0/nap/b0/one"), ("go", "taken", "b0/nap/b0/two"), ("stray", "kept", None)]
    assert signals["kept"] == {"stray": 1}, "a signal no step took stays visible"


async def test_an_update_is_refused_when_no_step_waits_and_accepted_by_the_waiting_step(time_skipping, tmp_path):
    async with served(time_skipping.client, APPROVE, tmp_path) as env:
        handle = await env.start("t.Approve")
        await wait_for_step(handle, "b0/a", waiting)
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update("approval", args=[{"ok": True}])
        assert "no step waits for signal 'approval'" in str(refused.value.cause)
        assert (await handle.query("signals"))["received"] == [], "a refused update leaves no trace in the run"
        accepted = await handle.execute_update("approve", args=[{"ok": True}])
        assert accepted == {"step": "b0/a"}
        assert await handle.result() == {"payload": {"ok": True}, "late": False}
        steps = await steps_of(handle)
    assert steps["b0/a"]["state"] == "completed" and "waiting" not in steps["b0/a"]


async def shows_the_wait(client, handle) -> None:
    """Progress, ffl status and the Web UI's current details say what the step waits for, and the command."""
    from temporalio.api.sdk.v1 import WorkflowMetadata

    from interpreter.cli.progress import progress_line
    from interpreter.cli.run_view import fetch_view
    from interpreter.cli.status_view import render

    view = await fetch_view(client, handle, outcome=False)
    view.address = "203.0.113.7:7233"  # as if read from another server than the default
    command = f"ffl signal {handle.id} approve '{{…}}' --address 203.0.113.7:7233"
    line = progress_line(view, 3.0, width=400)
    assert "1 waiting" in line and "waiting for a worker" not in line
    assert line.endswith(f"· Approve › a: waiting for signal 'approve' (up to 1 d) — {command}")
    assert any(f"[waiting: waiting for signal 'approve' (up to 1 d) — {command}]" in text for text in render(view))
    metadata = await handle.query("__temporal_workflow_metadata", result_type=WorkflowMetadata)
    assert metadata.current_details.endswith(
        f"steps: 0 done, 0 running, 0 failed, 1 waiting · current: Approve › a: waiting for signal 'approve' "
        f"(up to 1 d) — ffl signal {handle.id} approve '{{…}}'")
