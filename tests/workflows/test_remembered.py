"""The memo layer without a server: what a continued run's memo answers, and what it remembers for the next run."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from interpreter.semantics import BuiltinCall, FacetCall, ScriptCall, StepFailure
from interpreter.workflows.continuation import Scale
from interpreter.workflows.memo import Continuation, call_digest
from interpreter.workflows.remembered import Remembered


class Below:
    """The layer underneath: counts what reaches it, answers or fails as told."""

    def __init__(self, scale: Scale | None = None, fail: bool = False) -> None:
        self.scale = scale
        self.fail = fail
        self.calls: list[str] = []
        self.builtins_in_flight: list[int] = []

    async def call_facet(self, request: FacetCall) -> Any:
        self.calls.append(request.path)
        if self.fail:
            raise StepFailure(request.path, request.decl.qname, "handler said no", "Refused")
        return {"n": request.args["n"] * 10}

    async def script(self, request: ScriptCall) -> Any:
        self.calls.append(request.path)
        return {"s": 1}

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        self.calls.append(request.path)
        assert self.scale is not None
        self.builtins_in_flight.append(self.scale.builtins)
        return {"slept": True}


def facet_call(path: str, n: int, refs: tuple[str, ...] = ()) -> FacetCall:
    return FacetCall(path, SimpleNamespace(qname="ns.F"), SimpleNamespace(refs=list(refs)), {"n": n})  # type: ignore[arg-type]


def continued(memo: dict[str, Any], again: list[str] | None = None) -> Scale:
    return Scale(10_000, Continuation(memo=memo, again=again or []))


async def test_a_call_the_memo_does_not_know_runs_and_is_remembered_with_what_it_was_called_with():
    scale = Scale(10_000)
    below = Below()
    assert await Remembered(scale, below).call_facet(facet_call("a", 2)) == {"n": 20}
    assert below.calls == ["a"] and not scale.running
    assert scale.memo.carried() == {"a": {"r": {"n": 20}, "a": call_digest("ns.F", {"n": 2})}}


async def test_the_next_run_is_answered_from_the_memo_without_calling_the_handler():
    first = Scale(10_000)
    await Remembered(first, Below()).call_facet(facet_call("a", 2))
    below = Below()
    answer = await Remembered(continued(first.memo.carried()), below).call_facet(facet_call("a", 2))
    assert answer == {"n": 20} and below.calls == []


async def test_a_remembered_failure_is_raised_again_as_it_was_first_raised():
    first = Scale(10_000)
    with pytest.raises(StepFailure):
        await Remembered(first, Below(fail=True)).call_facet(facet_call("a", 1))
    below = Below()
    with pytest.raises(StepFailure) as raised:
        await Remembered(continued(first.memo.carried()), below).call_facet(facet_call("a", 1))
    assert (raised.value.cause, raised.value.error_type) == ("handler said no", "Refused") and below.calls == []


async def test_an_entry_made_for_other_arguments_does_not_answer_and_its_path_runs_again():
    scale = continued({"a": {"r": {"n": 20}, "a": call_digest("ns.F", {"n": 2})}})
    below = Below()
    assert await Remembered(scale, below).call_facet(facet_call("a", 3)) == {"n": 30}
    assert below.calls == ["a"] and "a" in scale.again


async def test_a_kept_entry_reading_a_step_that_runs_again_runs_again_too():
    entry = {"r": {"n": 20}, "a": call_digest("ns.F", {"n": 2}), "p": 1}  # kept from a resumed run
    scale = continued({"block/b": entry}, again=["block/a"])
    below = Below()
    await Remembered(scale, below).call_facet(facet_call("block/b", 2, refs=("a",)))
    assert below.calls == ["block/b"]


async def test_a_script_is_answered_by_its_path_and_a_builtin_counts_in_flight_while_it_runs():
    scale = continued({"s": {"r": {"s": 9}}})
    below = Below(scale)
    layer = Remembered(scale, below)
    assert await layer.script(ScriptCall("s", None, {}, "ns.F")) == {"s": 9}  # type: ignore[arg-type]
    assert await layer.builtin(BuiltinCall("t", "ffl.Sleep", {"seconds": 1})) == {"slept": True}
    assert below.calls == ["t"] and below.builtins_in_flight == [1] and scale.builtins == 0
    assert "t" in scale.memo.fresh
