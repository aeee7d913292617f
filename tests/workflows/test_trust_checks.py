"""The trust boundary's checks on values: what a continuation and a child's request must be to be honoured."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from temporalio.exceptions import ApplicationError

from interpreter.workflows.memo import Continuation
from interpreter.workflows.trust_checks import (
    check_continued,
    check_parent,
    check_second_argument,
    check_shape,
)


@dataclass
class Request:
    root_id: object = "wf"
    parent_run: str = ""


def refusal(check, *args) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        check(*args)
    assert raised.value.non_retryable
    return raised.value


def test_a_second_argument_of_a_run_temporal_did_not_continue_is_refused_as_a_parameter_error():
    error = refusal(check_second_argument, 2, None)
    assert error.type == "InvalidParameters" and "started with 2" in error.message
    check_second_argument(2, "run-0")  # continued: the continuation itself is checked next


def test_each_field_of_the_wrong_type_is_named():
    carried = Continuation(memo=[], seq="1", again=["a", 2])  # type: ignore[arg-type]
    error = refusal(check_shape, carried)
    assert error.type == "InvalidContinuation"
    assert "memo, seq, again have the wrong type" in error.message
    check_shape(Continuation())


def test_a_continuation_is_honoured_only_from_the_run_temporal_says_this_one_continues():
    check_continued(Continuation(previous_run="run-1"), "run-1", "run-0")
    error = refusal(check_continued, Continuation(previous_run="forged"), "run-1", "run-0")
    assert "carried from run 'forged'" in error.message and "run-1" in error.message


def test_an_older_continuation_is_bound_to_the_first_run_of_the_chain_except_in_a_child():
    check_continued(Continuation(run_id="run-0"), "run-1", "run-0")
    error = refusal(check_continued, Continuation(run_id="other"), "run-1", "run-0")
    assert "belongs to run 'other'" in error.message
    check_continued(Continuation(run_id="other"), "run-1", "child-run-0", False)  # a child's first run is its own


def test_a_child_needs_a_parent_inside_the_logical_run_it_names():
    check_parent(Request("wf"), ("wf", "r1"))
    check_parent(Request("wf"), ("wf/r0/loop/foreach[0-9]", "r2"))  # a nested child's parent is a child
    assert refusal(check_parent, Request("wf"), None).type == "UntrustedChild"
    assert "a child belongs to the run that starts it" in refusal(check_parent, Request("wf"), ("wfx", "r1")).message
    assert refusal(check_parent, Request(None), ("wf", "r1")).type == "UntrustedChild"


def test_a_child_requested_by_one_run_but_started_by_another_is_refused():
    check_parent(Request("wf", parent_run="r1"), ("wf", "r1"))
    error = refusal(check_parent, Request("wf", parent_run="r1"), ("wf", "r2"))
    assert error.type == "UntrustedChild" and "requested by run 'r1'" in error.message
