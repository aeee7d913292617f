"""The steps query: a filter by path prefix and state, pages, run totals, and the argument-less list."""

from __future__ import annotations

from interpreter.program.constants import STEPS_QUERY
from interpreter.program.queries import DEFAULT_LIMIT, MAX_LIMIT, StepsPage, StepsQuery

from .harness import run_ffl

SOURCE = """namespace q {
    event facet Echo(v: Long) => (v: Long)
    event facet Boom(v: Long) => (v: Long)
    workflow Q(items: Json) => (out: Json) andThen {
        first = Echo(v = 0)
        many = Echo(v = 1) andThen foreach x in $.items {
            e = Echo(v = $.x)
        }
        bad = Boom(v = 2) catch {
            c = Echo(v = 3)
        }
        yield Q(out = [first.v, bad.error_type])
    }
}
"""


async def echo(payload: dict) -> dict:
    return {"v": payload["v"]}


async def boom(payload: dict) -> dict:
    raise ValueError("boom")


async def finished_run(client, tmp_path, inspect):
    """Run the program, then ``inspect(handle)`` while its workers still answer queries."""
    run = await run_ffl(client, SOURCE, "q.Q", {"items": list(range(25))}, handlers={"q.Echo": echo, "q.Boom": boom},
                        tmp_path=tmp_path, timeout=60, inspect=inspect)
    assert run.result == {"out": [0, "ValueError"]}, run.message
    return run


async def page(handle, **query) -> StepsPage:
    return await handle.query(STEPS_QUERY, StepsQuery(**query), result_type=StepsPage)


async def test_steps_filter_by_path_prefix_and_state_with_run_totals(temporal_client, tmp_path):
    await finished_run(temporal_client, tmp_path, filters)


async def filters(handle) -> None:
    under = await page(handle, prefix="b0/many")
    assert under.matched == 26 and under.steps[0]["path"] == "b0/many"  # the step and its 25 iterations' steps
    inside = await page(handle, prefix="b0/many/")
    assert [s["path"] for s in inside.steps] == [f"b0/many/b0/foreach[{i}]/e" for i in range(25)]
    assert (await page(handle, prefix="b0/ma")).matched == 0  # whole path segments only
    caught = await page(handle, state="caught")
    assert [s["path"] for s in caught.steps] == ["b0/bad"] and caught.steps[0]["returns"]["error_type"] == "ValueError"
    assert (await page(handle, prefix="b0/bad", state="completed")).steps[0]["path"] == "b0/bad/catch/c"
    assert caught.counts == {"running": 0, "completed": 28, "failed": 0, "caught": 1, "cancelled": 0}


async def test_steps_come_in_pages_that_add_up_to_the_whole_run(temporal_client, tmp_path):
    await finished_run(temporal_client, tmp_path, pages)


async def pages(handle) -> None:
    paths, offset, count = [], 0, 0
    while offset is not None:
        one = await page(handle, prefix="b0/many/", offset=offset, limit=10)
        assert len(one.steps) <= 10 and one.matched == 25 and one.offset == offset
        paths += [s["path"] for s in one.steps]
        offset, count = one.next_offset, count + 1
    assert count == 3 and paths == [f"b0/many/b0/foreach[{i}]/e" for i in range(25)]
    default = await page(handle)
    assert default.matched == 29 and len(default.steps) == 29 <= DEFAULT_LIMIT and default.next_offset is None
    assert len((await page(handle, limit=10 * MAX_LIMIT)).steps) == 29  # a limit past the most is cut to it
    assert (await page(handle, offset=100)).steps == []


async def test_the_query_without_an_argument_still_answers_the_list_of_steps(temporal_client, tmp_path):
    run = await finished_run(temporal_client, tmp_path, lambda handle: handle.query(STEPS_QUERY))
    listed = run.inspected
    assert isinstance(listed, list) and [s["path"] for s in listed] == [s["path"] for s in run.steps]
    assert len(listed) == 29 and {"path", "facet", "state", "returns", "error"} <= set(listed[0])


async def test_a_bad_steps_query_is_refused_naming_what_was_wrong(temporal_client, tmp_path):
    await finished_run(temporal_client, tmp_path, refusals)


async def refusals(handle) -> None:
    from temporalio.client import WorkflowQueryFailedError

    async def refused(query) -> str:
        try:
            await handle.query(STEPS_QUERY, query)
        except WorkflowQueryFailedError as err:
            return str(err)
        raise AssertionError(f"{query} was answered")

    assert "unknown state 'waiting'" in await refused({"state": "waiting"})
    assert "ffl status's 'waiting' is running" in await refused({"state": "waiting"})
    assert "unknown state 'bogus'" in await refused({"state": "bogus"})
    assert "unknown key 'stat'" in await refused({"stat": "failed"})
    assert "'limit' must be an integer of at least 1, got 0" in await refused({"limit": 0})
    assert "'offset' must be an integer of at least 0, got -1" in await refused({"offset": -1})
    empty = await handle.query(STEPS_QUERY, {"offset": 100})  # raw JSON, as temporal workflow query sees it
    assert empty["steps"] == [] and empty["next_offset"] is None
