"""The steps query's input check: pure, so every refusal is shown without a server."""

from __future__ import annotations

import pytest

from interpreter.program.queries import MAX_LIMIT, BadStepsQuery, StepsQuery, steps_query


def test_a_good_query_passes_and_a_large_limit_is_cut():
    assert steps_query({"prefix": "b0/l", "state": "failed"}) == StepsQuery(prefix="b0/l", state="failed")
    assert steps_query(StepsQuery(limit=10 * MAX_LIMIT)).limit == MAX_LIMIT


@pytest.mark.parametrize(("query", "message"), [
    ({"state": "waiting"}, "unknown state 'waiting'"),
    ({"state": "done"}, "ffl status's 'done' is completed or caught"),
    ({"limit": 0}, "'limit' must be an integer of at least 1, got 0"),
    ({"limit": "10"}, "'limit' must be an integer of at least 1, got '10'"),
    ({"offset": True}, "'offset' must be an integer"),
    ({"prefix": 3}, "'prefix' must be a step path"),
    ({"page": 2, "size": 3}, "unknown keys 'page', 'size' in the steps query"),
    (["failed"], "takes a JSON object"),
])
def test_a_bad_query_is_refused_naming_what_was_wrong(query, message):
    with pytest.raises(BadStepsQuery, match=message.replace("(", r"\(")):
        steps_query(query)
