"""How a run's end is phrased and when ``ffl migrate`` is refused, without a server."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError, TemporalError

from interpreter.semantics import InvalidInput, Skipped, StepFailure
from interpreter.workflows.continuation import Scale
from interpreter.workflows.outcomes import check_migrate_request, failure_of


def test_a_step_failure_fails_the_run_with_its_own_type_and_message():
    failure = failure_of("ns.W", StepFailure("a/b", "ns.F", "handler said no", "Refused"))
    assert isinstance(failure, ApplicationError) and failure.non_retryable
    assert failure.type == "Refused" and "handler said no" in failure.message


@pytest.mark.parametrize("error, error_type, words", [
    (Skipped("'a' stopped after a failure"), "Skipped", "workflow 'ns.W' stopped: 'a' stopped"),
    (InvalidInput("missing parameter x"), "InvalidParameters", "missing parameter x"),
    (KeyError("k"), "InterpreterError", "interpreter error in workflow 'ns.W': KeyError"),
])  # fmt: skip
def test_other_errors_fail_the_run_at_once_saying_what_they_were(error, error_type, words):
    failure = failure_of("ns.W", error)
    assert isinstance(failure, ApplicationError) and failure.non_retryable
    assert failure.type == error_type and words in failure.message


def test_temporals_own_errors_stay_as_they_are_so_the_task_retries_with_fixed_code():
    error = TemporalError("nondeterminism")
    assert failure_of("ns.W", error) is error


def refusal(program_hash, running, scale) -> str:
    with pytest.raises(ApplicationError) as raised:
        check_migrate_request(program_hash, running, scale)
    assert raised.value.type == "NotMovable"
    return raised.value.message


def test_a_move_is_refused_unless_a_loaded_run_of_this_release_moves_to_another_program_once():
    scale = Scale(10_000)
    check_migrate_request("h2", "h1", scale)
    assert "only a loaded run" in refusal("h2", None, scale)
    assert "before continue-as-new" in refusal("h2", "h1", None)
    assert "takes a program hash" in refusal("", "h1", scale)
    assert "already runs program h1" in refusal("h1", "h1", scale)
    scale.moving_to = "h2"
    assert "already moves to program h2" in refusal("h3", "h1", scale)
