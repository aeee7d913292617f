"""How wide a run goes: its limits are honoured, slow handlers run wide, a spent start budget does not stall.

Widths are observed twice: in the history (activities scheduled and not yet
closed) and by the handlers themselves (how many ran at once).
"""

from __future__ import annotations

import asyncio
from collections import Counter

from benchmarks.history_figures import first_closed_after, most_pending_activities, scheduled_per_task
from interpreter.program.config import RuntimeConfig

from .harness import FAST_RETRY, run_ffl

FAN = """namespace adm {
    event facet Work(n: Long) => (n: Long)
    event facet Side(n: Long) => (n: Long)
    workflow Fan(items: Json) => (out: Json) andThen foreach x in $.items {
        w = Work(n = $.x)
        yield Fan(out = [w.n])
    }
    workflow Both(items: Json) => (work: Json, side: Json) andThen foreach x in $.items {
        w = Work(n = $.x)
        s = Side(n = $.x)
        yield Both(work = [w.n], side = [s.n])
    }
}
"""


class Concurrency:
    """Handlers that sleep and count how many of each facet run at once."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.now: Counter[str] = Counter()
        self.most: Counter[str] = Counter()

    def handler(self, facet: str):
        async def run(payload: dict) -> dict:
            self.now[facet] += 1
            self.most[facet] = max(self.most[facet], self.now[facet])
            try:
                await asyncio.sleep(self.seconds)
            finally:
                self.now[facet] -= 1
            return {"n": payload["n"]}

        return run

    def handlers(self) -> dict:
        return {name: self.handler(name) for name in ("adm.Work", "adm.Side")}


async def test_the_run_limit_is_honoured_and_results_keep_item_order(temporal_client, tmp_path):
    seen = Concurrency(0.2)
    config = RuntimeConfig(retry=FAST_RETRY, max_pending_activities=4)
    run = await run_ffl(temporal_client, FAN, "adm.Fan", {"items": list(range(20))}, handlers=seen.handlers(),
                        tmp_path=tmp_path, config=config, timeout=60)
    assert run.result == {"out": list(range(20))}, run.message
    history = await run.handle.fetch_history()
    assert most_pending_activities(history, {"adm.Work"}) == 4
    assert seen.most["adm.Work"] == 4


async def test_a_facet_limit_holds_that_facet_while_the_others_run_wider(temporal_client, tmp_path):
    seen = Concurrency(0.3)
    config = RuntimeConfig(retry=FAST_RETRY, facet_max_pending={"adm.Work": 2})
    items = list(range(16))
    run = await run_ffl(temporal_client, FAN, "adm.Both", {"items": items}, handlers=seen.handlers(),
                        tmp_path=tmp_path, config=config, timeout=60)
    assert run.result == {"work": items, "side": items}, run.message
    history = await run.handle.fetch_history()
    assert most_pending_activities(history, {"adm.Work"}) == 2
    assert seen.most["adm.Work"] == 2
    assert seen.most["adm.Side"] > 4  # not held up behind the limited facet


async def test_a_foreach_of_slow_handlers_runs_as_wide_as_the_handler_worker_takes(temporal_client, tmp_path):
    seen = Concurrency(3.0)
    items = list(range(400))
    run = await run_ffl(temporal_client, FAN, "adm.Fan", {"items": items}, handlers=seen.handlers(),
                        tmp_path=tmp_path, timeout=120, handler_slots=1000,
                        config=RuntimeConfig(retry=FAST_RETRY))  # the default limits
    assert run.result == {"out": items}, run.message
    history = await run.handle.fetch_history()
    assert most_pending_activities(history, {"adm.Work"}) >= 300  # the old fixed cap was 45
    assert seen.most["adm.Work"] >= 300


async def test_past_45_each_workflow_task_starts_at_most_its_budget_and_ticks_bring_the_next(
        temporal_client, tmp_path):
    seen = Concurrency(3.0)
    config = RuntimeConfig(retry=FAST_RETRY, max_starts_per_task=5)
    items = list(range(100))
    run = await run_ffl(temporal_client, FAN, "adm.Fan", {"items": items}, handlers=seen.handlers(),
                        tmp_path=tmp_path, config=config, timeout=60)
    assert run.result == {"out": items}, run.message
    history = await run.handle.fetch_history()
    per_task = [n for n in scheduled_per_task(history, {"adm.Work"}) if n]
    assert per_task[0] == 45  # as many as can never crowd the server's buffer, at once
    assert max(per_task[1:]) == 5 and sum(per_task) == 100
    # all 100 were started before the first handler finished: ticks, not completions, brought those tasks
    assert first_closed_after(history, {"adm.Work"}) == 100
