"""A run restored from a snapshot: the same answers and no handler called twice, and only what is still read
is carried. In memory: the first run stops at a failing handler, the second restores what the first
completed (carried through JSON, as continue-as-new carries it) with the handler fixed."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from interpreter.compiler import compile_sources
from interpreter.semantics.memory import MemoryEffects, run_in_memory
from interpreter.semantics.snapshot import Snapshot

CHAIN = """namespace snap {
    event facet Inc(i: Long) => (i: Long)
    workflow Chain() => (last: Long) andThen {
        s0 = Inc(i = 0)
        s1 = Inc(i = s0.i)
        s2 = Inc(i = s1.i)
        s3 = Inc(i = s2.i)
        s4 = Inc(i = s3.i)
        yield Chain(last = s4.i)
    }
}
"""

FAN = """namespace snap {
    event facet Twice(x: Long) => (y: Long)
    workflow Fan(xs: [Long]) => (out: [Long]) andThen foreach x in $.xs {
        t = Twice(x = $.x)
        yield Fan(out = [t.y])
    }
}
"""

NESTED = """namespace snap {
    event facet Inc(i: Long) => (i: Long)
    workflow Nested(n: Long) => (a: Long, b: Long, total: Long) andThen {
        first = Inc(i = $.n) andThen {
            inner = Inc(i = first.i * 10)
            deeper = Inc(i = inner.i) andThen {
                deepest = Inc(i = deeper.i)
            }
            yield Nested(a = deepest.i)
        }
        second = Inc(i = first.i)
        late = Inc(i = second.i + inner.i)
        yield Nested(b = late.i)
    } andThen when {
        case $.n > 0 => { yield Nested(total = 1) }
        case _ => { yield Nested(total = 0) }
    }
}
"""


class Handlers:
    """Handlers that fail at chosen steps until fixed, and count every call by step path."""

    def __init__(self, failing: set[str]):
        self.failing = failing
        self.calls: list[str] = []

    def mapping(self) -> dict[str, Any]:
        return {"snap.Inc": self.inc, "snap.Twice": self.twice}

    async def inc(self, args: dict[str, Any]) -> dict[str, Any]:
        return await self.answer({"i": args["i"] + 1}, args)

    async def twice(self, args: dict[str, Any]) -> dict[str, Any]:
        return await self.answer({"y": 2 * args["x"]}, args)

    async def answer(self, value: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
        key = json.dumps(args, sort_keys=True)
        self.calls.append(key)
        if key in self.failing:
            await asyncio.sleep(0.05)  # the others finish first: the failure stops nothing still running
            raise RuntimeError(f"bad input {key}")
        return value


async def two_runs(source: str, workflow: str, inputs: dict[str, Any], failing: set[str]):
    """(the uncontinued run, the run that failed, the restored run, what was carried, the handlers)."""
    program = compile_sources([("snap.ffl", source)])
    plain = await run_in_memory(program, workflow, inputs, MemoryEffects(Handlers(set()).mapping()))
    handlers = Handlers(failing)
    snapshot = Snapshot()
    failed = await run_in_memory(program, workflow, inputs, MemoryEffects(handlers.mapping()), snapshot=snapshot)
    carried = json.loads(json.dumps(snapshot.carried()))
    first_calls = list(handlers.calls)
    handlers.failing = set()
    handlers.calls.clear()
    restored = await run_in_memory(program, workflow, inputs, MemoryEffects(handlers.mapping()),
                                   snapshot=Snapshot(carried))
    return plain, failed, restored, carried, first_calls, handlers.calls


async def test_a_chain_restored_runs_only_the_steps_that_had_not_completed():
    plain, failed, restored, carried, first, again = await two_runs(CHAIN, "snap.Chain", {}, {'{"i": 3}'})
    assert failed.failure is not None and plain.returns == {"last": 5}
    assert restored.failure is None and restored.returns == plain.returns
    assert first == ['{"i": 0}', '{"i": 1}', '{"i": 2}', '{"i": 3}']
    assert again == ['{"i": 3}', '{"i": 4}']  # s3 (which failed) and s4: no completed step called again


async def test_only_values_an_open_step_reads_are_carried():
    *_, carried, _, _ = await two_runs(CHAIN, "snap.Chain", {}, {'{"i": 3}'})
    block = carried["blocks"]["b0"]
    assert block["done"] == [[0, 1]]  # s0 and s1: completed, read only by completed steps: no value carried
    assert block["kept"] == {"2": [{"i": 3}, [], None]}  # s2: read by s3, which has not completed


async def test_a_foreach_restored_runs_only_its_failed_iteration_and_keeps_yields_in_index_order():
    xs = list(range(10))
    plain, failed, restored, carried, first, again = await two_runs(FAN, "snap.Fan", {"xs": xs}, {'{"x": 7}'})
    assert failed.failure is not None
    assert restored.returns == plain.returns == {"out": [2 * x for x in xs]}
    assert len(first) == 10 and again == ['{"x": 7}']
    assert "b0/foreach[7]" not in carried["units"] and "b0/foreach[7]" not in carried["blocks"]
    assert carried["units"]["b0/foreach[3]"] == [["snap.Fan", {"out": [6]}]]
    assert not any(path.startswith("b0/foreach[3]") for path in carried["blocks"])  # its step records went


async def test_tails_inner_steps_read_from_outside_and_a_when_block_restore_alike():
    plain, failed, restored, carried, first, again = await two_runs(NESTED, "snap.Nested", {"n": 1}, {'{"i": 24}'})
    assert failed.failure is not None, "late = Inc(i = second.i + inner.i) = Inc(24) fails the first run"
    assert restored.returns == plain.returns == {"a": 23, "b": 25, "total": 1}
    assert again == ['{"i": 24}']  # first (and all inside it) and second are not called again
    kept = carried["blocks"]["b0"]["kept"]
    assert kept["0"][2] == {"inner": {"i": 21}}  # late reads inner, declared inside first's andThen
    assert not any(path.startswith("b0/first/") for path in carried["blocks"])  # first's tail: in first's record
    assert carried["units"]["b1"] == [["snap.Nested", {"total": 1}]]  # the when block completed


def test_a_completed_unit_drops_what_was_recorded_inside_it():
    snapshot = Snapshot()
    snapshot.unit_done("b0/a/b0/foreach[0]", [("t.W", {"x": 1})])
    snapshot.unit_done("b0/a/b0", [("t.W", {"x": 1})])
    assert set(snapshot.units) == {"b0/a/b0"}
    assert Snapshot(json.loads(json.dumps(snapshot.carried()))).unit("b0/a/b0") == [("t.W", {"x": 1})]


def test_completed_indices_join_kept_outcomes_and_done_ranges_in_order_within_the_block():
    from interpreter.semantics.snapshot import BlockState, StepOutcome

    state = BlockState(outcomes={7: StepOutcome({"i": 7}), 2: StepOutcome(None)}, done=[[0, 1], [4, 5], [9, 12]])
    assert state.completed_indices(11) == [0, 1, 2, 4, 5, 7, 9, 10]  # a range past the block's end is cut
    assert [i for i in range(11) if state.completed(i)] == state.completed_indices(11)
    assert BlockState().completed_indices(3) == []
