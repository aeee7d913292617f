"""A foreach larger than the child threshold runs in child workflows, on the real dev server."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType

from interpreter.program.config import RuntimeConfig

from ..runtime.harness import FAST_RETRY, run_ffl

FAN = """namespace fan {
    event facet Add(x: Long, y: Long) => (sum: Long)
    workflow Fan(items: Json, k: Long) => (sums: Json) andThen {
        base = Add(x = $.k, y = 0)
        all = Add(x = 0, y = 0) andThen foreach n in $.items {
            a = Add(x = $.n, y = base.sum)
            yield Fan(sums = [a.sum])
        }
    }
}
"""


def add(payload: dict) -> dict:
    return {"sum": payload["x"] + payload["y"]}


def small(**more) -> RuntimeConfig:
    return RuntimeConfig(retry=FAST_RETRY, child_threshold=4, iterations_per_child=3, children_in_flight=2, **more)


async def child_ids(handle) -> list[str]:
    history = await handle.fetch_history()
    return [e.start_child_workflow_execution_initiated_event_attributes.workflow_id for e in history.events
            if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED]


async def test_foreach_over_the_threshold_runs_in_children_and_keeps_item_order(temporal_client, tmp_path):
    items = list(range(10))
    run = await run_ffl(temporal_client, FAN, "fan.Fan", {"items": items, "k": 100}, handlers={"fan.Add": add},
                        tmp_path=tmp_path, config=small(), timeout=60)
    assert run.error is None, run.message
    assert run.result == {"sums": [n + 100 for n in items]}
    ids = await child_ids(run.handle)
    wid = run.handle.id
    assert ids == [f"{wid}/b0/all/b0/foreach[0-2]", f"{wid}/b0/all/b0/foreach[3-5]",
                   f"{wid}/b0/all/b0/foreach[6-8]", f"{wid}/b0/all/b0/foreach[9-9]"]
