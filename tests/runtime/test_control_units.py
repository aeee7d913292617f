"""Pure pieces of durable control: task tokens, policies over configs, the mirror's task token, ffl's JSON."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from interpreter.activities.listeners import TaskEvent
from interpreter.activities.mirror import build_ops
from interpreter.activities.mirror.listener import task_record
from interpreter.activities.payload import decode_task_token, encode_task_token
from interpreter.cli.control_cmds import ControlError, parse_json
from interpreter.program.config import RuntimeConfig
from interpreter.program.model import Policy
from interpreter.semantics import StepFailure
from interpreter.semantics.builtin_args import parse_time
from interpreter.workflows.options import policy_options


def test_a_task_token_survives_its_trip_through_a_shell():
    token = bytes(range(256)) * 2
    text = encode_task_token(token)
    assert text.isascii() and " " not in text and "/" not in text
    assert decode_task_token(text) == token
    assert decode_task_token(text.rstrip("=") + "\n") == token  # padding and a newline do not matter


@pytest.mark.parametrize("text", ["", "***", "é"])
def test_text_that_is_no_task_token_is_refused_clearly(text):
    with pytest.raises(ValueError, match="task token"):
        decode_task_token(text)


def test_a_policy_overrides_the_workers_config_field_by_field():
    config = RuntimeConfig.model_validate({"retry": {"maximum_attempts": 7, "initial_interval_seconds": 3},
                                           "queues": {"ns": "ns-queue"}})
    options, retry = policy_options(config, "ns.F", "ns", Policy(maximum_attempts=2, heartbeat_seconds=0,
                                                                  schedule_to_close_seconds=90, queue="gpu"))
    assert (retry.maximum_attempts, retry.initial_interval_seconds, retry.heartbeat_seconds) == (2, 3.0, None)
    assert options["task_queue"] == "gpu" and options["heartbeat_timeout"] is None
    assert options["schedule_to_close_timeout"].total_seconds() == 90
    plain, retry = policy_options(config, "ns.F", "ns", None)
    assert plain["task_queue"] == "ns-queue" and retry.maximum_attempts == 7
    assert plain["heartbeat_timeout"].total_seconds() == 60, "the default heartbeat timeout"


def test_a_calls_policy_keeps_what_it_leaves_unset_from_its_facets():
    merged = Policy(maximum_attempts=1).over(Policy(maximum_attempts=5, start_to_close_seconds=600.0))
    assert merged == Policy(maximum_attempts=1, start_to_close_seconds=600.0)


def test_wait_until_reads_iso_times_and_takes_utc_without_an_offset():
    assert parse_time("p", "2030-01-31T09:00:00") == datetime(2030, 1, 31, 9, tzinfo=UTC)
    assert parse_time("p", "2030-01-31T09:00:00Z") == datetime(2030, 1, 31, 9, tzinfo=UTC)
    with pytest.raises(StepFailure, match="not an ISO-8601 date-time: 'tomorrow'"):
        parse_time("p", "tomorrow")


def test_the_mirror_keeps_the_token_of_a_step_that_completes_later():
    event = TaskEvent(workflow_id="w", run_id="r", activity_id="b0/t", facet="ext.Translate", queue="ext",
                      attempt=1, state="running", payload={"text": "x"}, task_token="dG9rZW4=")
    record = task_record(event)
    assert record["task_token"] == "dG9rZW4="
    op = build_ops(record)[0]
    assert op.set["task_token"] == "dG9rZW4="
    cancelled = task_record(TaskEvent(workflow_id="w", run_id="r", activity_id="b0/t", facet="ext.Translate",
                                      queue="ext", attempt=1, state="canceled", payload={}))
    assert build_ops(cancelled)[0].guarded["state"] == "canceled"


def test_ffl_refuses_a_payload_that_is_not_json():
    assert parse_json('{"ok": true}', "the payload") == {"ok": True}
    assert parse_json(None, "the payload") is None
    with pytest.raises(ControlError, match="the payload is not valid JSON"):
        parse_json("{ok}", "the payload")
