"""A foreach larger than the child threshold runs in child workflows, on the real dev server."""

from __future__ import annotations

import asyncio

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus
from temporalio.exceptions import CancelledError

from interpreter.cli.run_view import fetch_view
from interpreter.cli.status_view import run_counts
from interpreter.program.config import RuntimeConfig
from interpreter.program.queries import StepsPage, StepsQuery
from interpreter.workflows.chunks import ChunkRequest, ChunkResult

from ..runtime.harness import FAST_RETRY, run_ffl
from ..runtime.test_workflow_runtime import ListSink

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
    prefix = f"{run.handle.id}/{run.handle.result_run_id}"  # the run's first run id: unique per start
    assert ids == [f"{prefix}/b0/all/b0/foreach[0-2]", f"{prefix}/b0/all/b0/foreach[3-5]",
                   f"{prefix}/b0/all/b0/foreach[6-8]", f"{prefix}/b0/all/b0/foreach[9-9]"]
    # Each child is sent its slice of the list, never the list: the body reads no parameter but `$.n`.
    first = await child_request(temporal_client, ids[1])
    assert (first.items, first.first, first.params) == ([3, 4, 5], 3, {})
    # And it sends back its iterations' yields as the one write they merge into, not one per iteration.
    assert (await child_result(temporal_client, ids[1])).writes == [[["fan.Fan", {"sums": [103, 104, 105]}]]]


async def child_request(client, child_id: str) -> ChunkRequest:
    history = await client.get_workflow_handle(child_id).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    [request] = await client.data_converter.decode(started.input.payloads[:1], [ChunkRequest])
    return request


async def child_result(client, child_id: str) -> ChunkResult:
    history = await client.get_workflow_handle(child_id).fetch_history()
    completed = history.events[-1].workflow_execution_completed_event_attributes
    [result] = await client.data_converter.decode(completed.result.payloads[:1], [ChunkResult])
    return result


NESTED = """namespace nest {
    event facet Mul(x: Long, y: Long) => (p: Long)
    workflow Grid(rows: Json, cols: Json) => (cells: Json) andThen foreach r in $.rows {
        row = Mul(x = $.r, y = 1) andThen foreach c in $.cols {
            cell = Mul(x = $.r, y = $.c)
            yield Grid(cells = [cell.p])
        }
    }
}
"""


def mul(payload: dict) -> dict:
    return {"p": payload["x"] * payload["y"]}


async def test_nested_foreach_fans_out_from_children_into_grandchildren(temporal_client, tmp_path):
    rows, cols = list(range(1, 6)), list(range(1, 7))
    sink = ListSink()

    async def inspect(handle):
        page = await handle.query("steps", StepsQuery(limit=1000), result_type=StepsPage)
        return page, await fetch_view(temporal_client, handle)

    run = await run_ffl(temporal_client, NESTED, "nest.Grid", {"rows": rows, "cols": cols}, handlers={"nest.Mul": mul},
                        tmp_path=tmp_path, config=small(mirror=True), mirror=sink, timeout=90, inspect=inspect)
    assert run.error is None, run.message
    assert run.result == {"cells": [r * c for r in rows for c in cols]}
    top = await child_ids(run.handle)
    assert len(top) == 2  # 5 rows in chunks of 3
    grandchildren = []
    for child in top:
        grandchildren += await child_ids(temporal_client.get_workflow_handle(child))
    assert len(grandchildren) == 5 * 2  # each row's 6 columns in chunks of 3
    assert f"{run.handle.id}/{run.handle.result_run_id}/b0/foreach[4]/row/b0/foreach[3-5]" in grandchildren
    page, view = run.inspected
    assert [c["workflow_id"] for c in page.children] == top
    assert sum(c["counts"]["completed"] for c in page.children) == 5 + 30  # every row and cell, nested ones too
    assert page.steps == []  # the parent itself ran no step: all of them ran in its children
    assert run_counts(view)["done"] == 35 and run_counts(view)["failed"] == 0  # ffl status counts them all
    assert len(view.children) == 2
    # the mirror sees one logical run: every step record under the root run's identity, none twice completed
    steps = [r for r in sink.records if r["kind"] == "step" and r["state"] == "completed" and r["facet"] == "nest.Mul"]
    assert {(r["workflow_id"], r["run_id"]) for r in steps} == {(run.handle.id, run.handle.result_run_id)}
    assert len(steps) == len({r["path"] for r in steps}) == 35
    tasks = [r for r in sink.records if r["kind"] == "task"]
    assert {r["workflow_id"] for r in tasks} == {run.handle.id}


FAILING = """namespace failing {
    event facet Check(n: Long) => (n: Long)
    workflow Run(items: Json) => (out: Json, error: String) andThen {
        all = Check(n = 0) andThen foreach n in $.items {
            c = Check(n = $.n)
            yield Run(out = [c.n])
        } catch {
            yield Run(error = all.error)
        }
    }
    workflow Plain(items: Json) => (out: Json) andThen foreach n in $.items {
        c = Check(n = $.n)
        yield Plain(out = [c.n])
    }
}
"""


def check(payload: dict) -> dict:
    if payload["n"] == 7:
        raise ValueError("seven is not allowed")
    return {"n": payload["n"]}


async def test_a_failing_iteration_in_a_child_fails_its_step_with_the_same_message(temporal_client, tmp_path):
    items = list(range(10))
    caught = await run_ffl(temporal_client, FAILING, "failing.Run", {"items": items},
                           handlers={"failing.Check": check}, tmp_path=tmp_path, config=small(), timeout=60)
    assert caught.error is None, caught.message
    assert caught.result["error"] == "seven is not allowed"
    plain = await run_ffl(temporal_client, FAILING, "failing.Plain", {"items": items},
                          handlers={"failing.Check": check}, tmp_path=tmp_path, config=small(), timeout=60)
    one_history = await run_ffl(temporal_client, FAILING, "failing.Plain", {"items": items},
                                handlers={"failing.Check": check}, tmp_path=tmp_path, timeout=60)
    assert plain.error is not None and one_history.error is not None
    assert str(plain.error.cause) == str(one_history.error.cause)
    assert "step 'b0/foreach[7]/c' (failing.Check) failed: ValueError: seven is not allowed" in str(plain.error.cause)


HOLD = """namespace hold {
    event facet Wait(n: Long) => (n: Long)
    workflow Run(items: Json) => (out: Json) andThen foreach n in $.items {
        w = Wait(n = $.n)
        yield Run(out = [w.n])
    }
}
"""


async def test_cancelling_the_parent_cancels_its_children(temporal_client, tmp_path):
    started: asyncio.Queue[str] = asyncio.Queue()

    async def wait(payload: dict) -> dict:
        started.put_nowait(activity.info().workflow_id)
        await asyncio.sleep(60)
        return {"n": payload["n"]}

    async def cancel_the_root() -> str:
        child = await asyncio.wait_for(started.get(), 30)
        await temporal_client.get_workflow_handle(child.split("/")[0]).cancel()  # <root id>/<run id>/b0/...
        return child

    canceller = asyncio.create_task(cancel_the_root())
    run = await run_ffl(temporal_client, HOLD, "hold.Run", {"items": list(range(10))}, handlers={"hold.Wait": wait},
                        tmp_path=tmp_path, config=small(), timeout=30)
    child = await canceller
    assert run.error is not None and isinstance(run.error.cause, CancelledError), run.message
    ids = await child_ids(run.handle)
    assert child in ids and len(ids) == 2  # two children in flight, no more started
    for child_id in ids:  # the parent asks them to cancel as it ends; they close within moments
        handle = temporal_client.get_workflow_handle(child_id)
        for _ in range(50):
            status = (await handle.describe()).status
            if status != WorkflowExecutionStatus.RUNNING:
                break
            await asyncio.sleep(0.2)
        assert status == WorkflowExecutionStatus.CANCELED
