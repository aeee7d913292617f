"""The interpreter's run-time state alone: yields merging, scopes, handles, the failure to report."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interpreter.program.evaluate import EvaluationError
from interpreter.semantics import Handle, Scope, Skipped, StepFailure
from interpreter.semantics.failures import first_failure
from interpreter.semantics.interpreter import first_case_wins
from interpreter.semantics.scope import ScriptWrite, combined, merge_into
from interpreter.workflows.memo import Memo


def test_lists_concatenate_and_anything_else_is_overwritten():
    returns = {"xs": [1], "last": "a"}
    merge_into(returns, {"xs": [2, 3], "last": "b", "new": {"k": 1}})
    assert returns == {"xs": [1, 2, 3], "last": "b", "new": {"k": 1}}


_values = st.one_of(st.integers(0, 3), st.none(), st.lists(st.integers(0, 9), max_size=3))
_writes = st.lists(st.tuples(st.sampled_from(["A", "B"]),
                             st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3)), max_size=12)


def merged_items(start: dict, writes: list) -> list:
    returns = dict(start)
    for _, fields in writes:
        merge_into(returns, fields, set())
    return list(returns.items())  # key order too


@given(_writes, st.dictionaries(st.sampled_from(["x", "y", "z"]), _values, max_size=3))
def test_combined_writes_merge_into_exactly_what_the_writes_merge_into_key_order_included(writes, start):
    together = combined(writes)
    assert merged_items(start, together) == merged_items(start, writes)
    runs = sum(1 for k, (target, _) in enumerate(writes) if k == 0 or writes[k - 1][0] != target)
    assert len(together) <= min(len(writes), 2 * runs)  # each run of one target's writes: one or two


def test_a_thousand_one_item_yields_become_one_write_and_a_value_before_lists_keeps_its_overwrite():
    writes = [("Fan", {"out": [i]}) for i in range(1000)]
    assert combined(writes) == [("Fan", {"out": list(range(1000))})]
    reset = combined([("Fan", {"out": [1]}), ("Fan", {"out": "none"}), ("Fan", {"out": [2]}), ("Fan", {"n": 1})])
    assert reset == [("Fan", {"out": "none", "n": 1}), ("Fan", {"out": [2]})]
    assert merged_items({"out": [0]}, reset) == [("out", [2]), ("n", 1)]


def test_a_list_another_step_holds_is_copied_and_one_the_merge_made_is_extended_in_place():
    theirs = [1]
    returns: dict = {"xs": theirs}
    owned: set[str] = set()
    merge_into(returns, {"xs": [2]}, owned)
    assert theirs == [1] and returns["xs"] == [1, 2] and owned == {"xs"}
    made = returns["xs"]
    merge_into(returns, {"xs": [3]}, owned)
    assert returns["xs"] is made and made == [1, 2, 3]
    merge_into(returns, {"xs": "scalar"}, owned)
    assert returns["xs"] == "scalar" and owned == set()


async def test_a_scope_finds_steps_up_its_parents_and_a_failure_stops_the_enclosing_step_only():
    outer = Scope({"p": 1}, "", None, None, "t.W", {"a": Handle.resolved("a", ("x",), {"x": 1})})
    step = outer.child("b0/s", owner="b0/s")
    inner = step.child("b0/s/b0")
    assert inner.find("a").returns == {"x": 1} and inner.params == {"p": 1}
    with pytest.raises(EvaluationError, match="step 'nope' is not visible in 'b0/s/b0'"):
        inner.find("nope")
    inner.fail()
    assert inner.is_failed() and step.is_failed() and not outer.is_failed()
    assert inner.nesting() == 1 and outer.nesting() == 0


async def test_a_handle_that_failed_makes_its_readers_skip_and_reads_null_for_its_error_until_then():
    handle = Handle("s", ("v",), ("error", "error_type"))
    waiter = asyncio.ensure_future(handle.wait())
    handle.fail()
    with pytest.raises(Skipped, match="step 's' failed"):
        await waiter
    caught = Handle.resolved("c", ("v",), {"v": 1}, ("error", "error_type"))
    assert dict(caught.value().returns) == {"error": None, "error_type": None, "v": 1}


def test_the_failure_reported_is_the_first_that_happened_not_the_first_in_order():
    first, second = StepFailure("b0/a", "t.A", "one", "ValueError"), StepFailure("b0/b", "t.B", "two", "KeyError")
    assert first_failure([None, second, first, Skipped("later")]) is first
    assert isinstance(first_failure([None, Skipped("s")]), Skipped) and first_failure([None, 1]) is None


def test_a_failure_names_its_step_or_the_workflow_and_the_steps_it_also_failed():
    failure = StepFailure("b0/s/b0/t", "t.T", "boom", "ValueError")
    failure.failed_within("b0/s", "t.S")
    failure.failed_within("b0/s", "t.S")
    assert str(failure) == "step 'b0/s/b0/t' (t.T) failed: ValueError: boom\n  in step 'b0/s' (t.S)"
    assert str(StepFailure("", "t.W", "bad output", "TypeError")) == "workflow 't.W' failed: TypeError: bad output"


def test_of_several_matching_cases_the_first_keeps_a_value_and_lists_concatenate_in_case_order():
    writes = first_case_wins([[("t.W", {"status": "a", "notes": ["x"]})],
                              [("t.W", {"status": "b", "notes": ["y"], "other": 1})],
                              [ScriptWrite(("t.W", {"status": "c"}))]])
    assert writes == [("t.W", {"status": "a", "notes": ["x"]}), ("t.W", {"notes": ["y"], "other": 1})]


def test_a_memo_answers_from_earlier_runs_first_and_carries_both():
    memo = Memo({"b0/a": {"r": 1}})
    memo.put("b0/b", {"r": 2})
    assert memo.get("b0/a") == {"r": 1} and memo.get("b0/b") == {"r": 2} and memo.get("b0/c") is None
    assert memo.carried() == {"b0/a": {"r": 1}, "b0/b": {"r": 2}}
