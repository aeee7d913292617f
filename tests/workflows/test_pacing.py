"""Admission's pacing without a server: a clock the test moves, ticks the test counts.

The clock gives workflow time (seconds) and the workflow task a call happens
in, as the history length would; a tick here moves both, as an ``ffl.Tick``'s
completion brings a new task a moment later.
"""

from __future__ import annotations

import asyncio

import pytest

from interpreter.workflows.pacing import (
    DURATION_FLOOR,
    RAMP_SECONDS,
    SAFE_WIDTH,
    START_FRACTION,
    Admission,
    _Facet,
)


class Clock:
    def __init__(self) -> None:
        self.time = 1000.0
        self.length = 3  # the history length: which workflow task this is

    def now(self) -> float:
        return self.time

    def task(self) -> int:
        return self.length

    def next_task(self, seconds: float = 0.0) -> None:
        self.time += seconds
        self.length += 10


class Ticks:
    """Ticks asked for; each brings the next workflow task, a second later."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.asked: list[int] = []

    async def __call__(self, number: int) -> None:
        self.asked.append(number)
        self.clock.next_task(1.0)


def admission(limit: int = 1000, per_task: int = 10, rate: float = 1000.0, per_facet: dict | None = None,
              hold=None) -> tuple[Admission, Clock, Ticks]:
    clock = Clock()
    ticks = Ticks(clock)
    return Admission(limit, per_task, rate, per_facet, clock=clock, tick=ticks, hold=hold), clock, ticks


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_up_to_the_safe_width_every_activity_is_admitted_at_once():
    pace, _, ticks = admission(per_task=5)
    granted = [await pace.acquire("f") for _ in range(SAFE_WIDTH)]
    assert pace.in_flight == SAFE_WIDTH and len(granted) == SAFE_WIDTH
    assert ticks.asked == [] and not pace.waiting()


async def test_past_the_safe_width_a_spent_budget_waits_for_a_tick_which_brings_the_next_task():
    pace, clock, ticks = admission(per_task=5)
    for _ in range(SAFE_WIDTH):
        await pace.acquire("f")
    waiter = asyncio.ensure_future(pace.acquire("f"))
    await settle()
    assert ticks.asked == [1]  # the start budget is spent and nothing completes soon: a tick
    assert waiter.done()  # the tick's task had budget again, and the rate allowed one more
    assert waiter.result() == clock.time and pace.in_flight == SAFE_WIDTH + 1


async def test_the_run_limit_admits_the_next_only_once_one_completes():
    pace, clock, _ = admission(limit=2)
    first = await pace.acquire("f")
    await pace.acquire("f")
    third = asyncio.ensure_future(pace.acquire("f"))
    await settle()
    assert not third.done() and pace.waiting()
    clock.next_task(0.5)
    pace.release("f", first)
    await settle()
    assert third.done() and pace.in_flight == 2
    assert pace.facets["f"].shortest == 0.5  # the completed one taught the facet its duration


async def test_a_facet_at_its_limit_does_not_hold_up_the_others():
    pace, _, _ = admission(per_facet={"slow": 1})
    await pace.acquire("slow")
    held = asyncio.ensure_future(pace.acquire("slow"))
    await settle()
    other = asyncio.ensure_future(pace.acquire("other"))
    await settle()
    assert not held.done() and other.done()
    pace.release("slow", None, grant=True)
    await settle()
    assert held.done()


async def test_waiters_are_admitted_in_arrival_order():
    pace, _, _ = admission(limit=1)
    granted = await pace.acquire("a")
    order: list[str] = []

    async def wait(facet: str) -> None:
        await pace.acquire(facet)
        order.append(facet)
        pace.release(facet, None)

    waiters = [asyncio.ensure_future(wait(facet)) for facet in ("b", "a", "c")]
    await settle()
    pace.release("a", granted)
    await asyncio.gather(*waiters)
    assert order == ["b", "a", "c"]


async def test_a_task_crowded_with_completions_scales_the_rate_down_in_proportion():
    pace, clock, _ = admission(per_task=10, rate=1000.0)
    assert pace.rate == 1000.0 / START_FRACTION
    grants = [await pace.acquire("f") for _ in range(40)]
    for granted in grants:  # 40 completions in one task: four times the budget
        pace.release("f", granted)
    clock.next_task(0.0)
    await pace.acquire("f")  # the first call of the next task settles the last one's counts
    assert pace.rate == pytest.approx(1000.0 / START_FRACTION / 4)


async def test_calm_tasks_let_the_rate_climb_to_the_configured_rate_in_ramp_seconds():
    pace, clock, _ = admission(per_task=10, rate=1000.0)
    await pace.acquire("f")
    start = pace.rate
    clock.next_task(RAMP_SECONDS / 4)
    await pace.acquire("f")  # a calm task (no completions): the rate climbs by a quarter of the maximum
    assert pace.rate == pytest.approx(start + 1000.0 / 4)
    clock.next_task(RAMP_SECONDS)
    await pace.acquire("f")
    assert pace.rate == 1000.0  # never past the configured rate


async def test_past_the_safe_width_the_rate_bounds_what_is_in_flight_by_each_facets_duration():
    pace, clock, ticks = admission(per_task=10, rate=100.0)
    assert pace.rate == 100.0 / START_FRACTION  # 25 completions per second
    for _ in range(SAFE_WIDTH):
        await pace.acquire("f")
    clock.next_task(0.0)  # no time passed: the rate does not climb
    pace.facets["f"].shortest = 2.0  # activities of two seconds: 25 per second allows 50 in flight
    for _ in range(5):
        await pace.acquire("f")
    held = asyncio.ensure_future(pace.acquire("f"))
    await settle()
    assert pace.in_flight == 50 and not held.done()
    assert ticks.asked == []  # budget is left: only a completion can make room


def test_an_activity_is_taken_to_last_the_shortest_seen_else_at_least_the_time_since_the_first_began():
    state = _Facet(first_start=100.0)
    assert state.expected(100.0) == DURATION_FLOOR
    assert state.expected(103.0) == 3.0
    state.observe(0.5)
    state.observe(2.0)
    assert state.expected(103.0) == 0.5


async def test_while_the_run_holds_nothing_is_admitted_and_no_tick_is_asked_for():
    holding = [True]
    pace, _, ticks = admission(hold=lambda: holding[0])
    waiter = asyncio.ensure_future(pace.acquire("f"))
    await settle()
    assert not waiter.done() and pace.in_flight == 0 and ticks.asked == []
    waiter.cancel()
    await settle()
    assert not pace.waiting()  # a cancelled waiter leaves its queue


async def test_a_slot_is_given_back_when_its_body_fails_and_its_duration_is_learnt():
    pace, clock, _ = admission()
    with pytest.raises(ValueError):
        async with pace.slot("f"):
            clock.next_task(0.3)
            raise ValueError("handler failed")
    assert pace.in_flight == 0 and pace.facets["f"].in_flight == 0
    assert pace.facets["f"].shortest == pytest.approx(0.3)
