"""Scale meets durable control: built-in steps and signals across continue-as-new, children and local activities."""

from __future__ import annotations

import asyncio

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus

from interpreter.activities.handlers import CompleteLater
from interpreter.activities.payload import decode_task_token
from interpreter.program.config import RuntimeConfig

from ..runtime.control_harness import served
from ..runtime.harness import FAST_RETRY, run_ffl
from .test_children import child_ids
from .test_continuation import inc, runs_of

CHAIN = 60

WAITS = ("namespace sc {\n    event facet Inc(x: Long) => (y: Long)\n"
         "    workflow Run() => (first: Json, second: Json, y: Long) andThen {\n"
         "        nap = ffl.Sleep(seconds = 1)\n"
         "        one = ffl.WaitForSignal(name = \"go\")\n"
         "        s0 = Inc(x = 0)\n"
         + "".join(f"        s{i} = Inc(x = s{i - 1}.y)\n" for i in range(1, CHAIN)) +
         f"        last = Inc(x = s{CHAIN - 1}.y) andThen {{\n"
         "            two = ffl.WaitForSignal(name = \"go\")\n"
         "            yield Run(second = two.payload)\n"
         "        }\n"
         "        yield Run(first = one.payload, y = last.y)\n"
         "    }\n}\n")


async def test_a_run_continued_as_new_keeps_its_signals_and_neither_sleeps_nor_waits_again(temporal_client, tmp_path):
    """Both signals arrive at the start: the first is taken at once, the second is kept across continue-as-new
    until the wait at the chain's end takes it; the sleep and the first wait are not performed again."""
    config = RuntimeConfig(retry=FAST_RETRY, continue_after_events=100)
    async with served(temporal_client, WAITS, tmp_path, {"sc.Inc": inc}, config=config) as env:
        handle = await env.start("sc.Run")
        await handle.signal("go", {"n": 1})
        await handle.signal("go", {"n": 2})
        result = await asyncio.wait_for(handle.result(), 120)
        signals = await handle.query("signals")
    assert result == {"first": {"n": 1}, "second": {"n": 2}, "y": CHAIN + 1}
    assert signals["count"] == 2
    assert [(r["index"], r["state"], r["step"]) for r in signals["received"]] == [
        (0, "taken", "b0/one"), (1, "taken", "b0/last/b0/two")]
    executions = await runs_of(temporal_client, handle.id)
    statuses = [e.status for e in executions]
    assert statuses.count(WorkflowExecutionStatus.CONTINUED_AS_NEW) >= 2, statuses
    timers = 0
    for execution in executions:
        history = await temporal_client.get_workflow_handle(handle.id, run_id=execution.run_id).fetch_history()
        timers += sum(e.event_type == EventType.EVENT_TYPE_TIMER_STARTED for e in history.events)
    assert timers == 1  # the sleep, once: continued runs answer it from the memo


FAN = """namespace fw {
    event facet Add(x: Long, y: Long) => (sum: Long)
    facet Approved(n: Long) => (ok: Json) andThen {
        w = ffl.WaitForSignal(name = "item")
        yield Approved(ok = w.payload)
    }
    workflow Signals(items: Json) => (got: Json) andThen {
        all = Add(x = 0, y = 0) andThen foreach n in $.items {
            a = Approved(n = $.n)
            yield Signals(got = [a.ok])
        }
    }
    workflow Naps(items: Json) => (sums: Json) andThen {
        all = Add(x = 0, y = 0) andThen foreach n in $.items {
            z = ffl.Sleep(seconds = 0.1)
            a = Add(x = $.n, y = 1)
            yield Naps(sums = [a.sum])
        }
    }
}
"""


async def test_a_large_foreach_that_waits_for_signals_stays_in_the_run_and_one_that_sleeps_uses_children(
        temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=2, iterations_per_child=2)
    add = {"fw.Add": lambda p: {"sum": p["x"] + p["y"]}}
    async with served(temporal_client, FAN, tmp_path, add, config=config) as env:
        waiting = await env.start("fw.Signals", {"items": [0, 1, 2, 3, 4]})
        for n in range(5):
            await waiting.signal("item", n)
        got = await asyncio.wait_for(waiting.result(), 60)
        napping = await env.start("fw.Naps", {"items": [0, 1, 2, 3, 4]})
        sums = await asyncio.wait_for(napping.result(), 60)
    assert sorted(got["got"]) == [0, 1, 2, 3, 4]
    assert await child_ids(waiting) == []  # signals reach the run's own workflow: no children
    assert sums == {"sums": [1, 2, 3, 4, 5]}
    assert len(await child_ids(napping)) == 3  # built-in steps run in children too


LATER = """
namespace lx {
    event facet Quick(text: String) => (text: String)
    event facet Agency(text: String) => (text: String)
        with ffl.Timeout(start_to_close_seconds = 600, heartbeat_seconds = 0)
    workflow Local(text: String) => (text: String) andThen {
        q = Quick(text = $.text)
        yield Local(text = q.text)
    }
    workflow Remote(text: String) => (text: String) andThen {
        a = Agency(text = $.text)
        yield Remote(text = a.text)
    }
}
"""


async def test_complete_later_under_local_activities(temporal_client, tmp_path):
    """A facet served in-process runs as a local activity, which cannot complete later: the run fails saying
    so; a facet whose policy turns its heartbeat timeout off runs as a remote activity and completes later."""
    tokens: list[str] = []

    def later(payload):
        tokens.append(payload["_task_token"])
        raise CompleteLater("sent away")

    handlers = {"lx.Quick": later, "lx.Agency": later}
    refused = await run_ffl(temporal_client, LATER, "lx.Local", {"text": "hi"}, handlers=handlers,
                            tmp_path=tmp_path / "a", local=True, timeout=60)
    assert refused.error_type == "CompleteLaterRefused", refused.message
    assert "runs as a local activity" in refused.message and "remote_facets" in refused.message

    tokens.clear()

    async def complete() -> None:
        while not tokens:
            await asyncio.sleep(0.1)
        await temporal_client.get_async_activity_handle(task_token=decode_task_token(tokens[0])).complete(
            {"text": "done"})

    completer = asyncio.create_task(complete())
    run = await run_ffl(temporal_client, LATER, "lx.Remote", {"text": "hi"}, handlers=handlers,
                        tmp_path=tmp_path / "b", local=True, timeout=60)
    await asyncio.wait_for(completer, 5)
    assert run.error is None, run.message
    assert run.result == {"text": "done"}
    history = await run.handle.fetch_history()
    assert any(e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
               and e.activity_task_scheduled_event_attributes.activity_type.name == "lx.Agency"
               for e in history.events)
