"""A parent keeps each child's yields as the few writes that merge the same, not one per iteration."""

from __future__ import annotations

from interpreter.semantics.scope import merge_into
from interpreter.workflows.children import compacted
from interpreter.workflows.chunks import ChunkResult


def merge_iterations(iterations: list) -> dict:
    returns: dict = {}
    for iteration in iterations:
        for _target, fields in iteration:
            merge_into(returns, fields, set())
    return returns


def test_a_chunk_of_a_thousand_iterations_is_kept_as_one_write_with_the_same_merge():
    iterations = [[["Fan", {"out": [i], "last": i}]] for i in range(1000)]
    kept = compacted(iterations)
    assert kept == [[["Fan", {"out": list(range(1000)), "last": 999}]]]
    assert merge_iterations(kept) == merge_iterations(iterations)


def test_a_result_carried_by_an_earlier_release_per_iteration_compacts_the_same_and_empty_stays_empty():
    carried = ChunkResult.restored({"writes": [[["Fan", {"out": [1]}]], [], [["Other", {"n": 2}]]]})
    assert compacted(carried.writes) == [[["Fan", {"out": [1]}], ["Other", {"n": 2}]]]
    assert compacted([[], []]) == []
