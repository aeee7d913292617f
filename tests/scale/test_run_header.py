"""The logical run travels to a child's handlers as the ``ffl-run`` header, never in the handler's arguments."""

from __future__ import annotations

import json
from types import SimpleNamespace

from temporalio.api.enums.v1 import EventType

from interpreter.activities.dispatch import logical_run
from interpreter.activities.payload import task_uuid
from interpreter.activities.run_header import LEGACY_ARGUMENT, RUN_HEADER, reported_run
from interpreter.program.config import RuntimeConfig

from ..runtime.harness import FAST_RETRY, run_ffl
from ..runtime.test_workflow_runtime import ListSink
from .test_children import FAN, child_ids

OWN = SimpleNamespace(workflow_id="child", workflow_run_id="child-run")


def test_a_handler_reports_under_its_own_workflow_without_a_header():
    args = {"x": 1}
    assert logical_run(args, OWN) == ("child", "child-run")
    assert args == {"x": 1}


def test_a_handler_reports_under_the_run_its_header_names():
    token = reported_run.set(("root", "root-run"))
    try:
        assert logical_run({"x": 1}, OWN) == ("root", "root-run")
    finally:
        reported_run.reset(token)


def test_a_task_of_an_older_release_names_the_run_in_its_arguments_which_the_handler_never_sees():
    args = {"x": 1, LEGACY_ARGUMENT: ["root", "root-run"]}
    assert logical_run(args, OWN) == ("root", "root-run")
    assert args == {"x": 1}


def test_a_malformed_legacy_argument_is_dropped_and_the_own_run_kept():
    args = {"x": 1, LEGACY_ARGUMENT: ["root"]}
    assert logical_run(args, OWN) == ("child", "child-run")
    assert args == {"x": 1}


async def test_a_mirrored_childs_handlers_get_the_root_run_in_a_header_and_report_under_it(temporal_client, tmp_path):
    seen: list[str] = []  # each call's _task_uuid, made of the workflow id its handler reports under

    def add(payload: dict) -> dict:
        seen.append(payload["_task_uuid"])
        return {"sum": payload["x"] + payload["y"]}

    config = RuntimeConfig(retry=FAST_RETRY, child_threshold=4, iterations_per_child=3, children_in_flight=2,
                           mirror=True)
    run = await run_ffl(temporal_client, FAN, "fan.Fan", {"items": list(range(6)), "k": 1},
                        handlers={"fan.Add": add}, tmp_path=tmp_path, config=config, mirror=ListSink(), timeout=60)
    assert run.error is None, run.message
    root = [run.handle.id, run.handle.result_run_id]
    [child, *_] = await child_ids(run.handle)
    history = await temporal_client.get_workflow_handle(child).fetch_history()
    scheduled = [e.activity_task_scheduled_event_attributes for e in history.events
                 if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                 and e.activity_task_scheduled_event_attributes.activity_type.name == "fan.Add"]
    assert len(scheduled) == 3
    for attributes in scheduled:
        assert json.loads(attributes.header.fields[RUN_HEADER].data) == root
        assert LEGACY_ARGUMENT not in json.loads(attributes.input.payloads[0].data)
        assert task_uuid(run.handle.id, attributes.activity_id) in seen  # the handler reported under the root run
        assert task_uuid(child, attributes.activity_id) not in seen
    # the parent's own handlers report under their own run: no header there
    parent = await run.handle.fetch_history()
    assert all(RUN_HEADER not in e.activity_task_scheduled_event_attributes.header.fields for e in parent.events
               if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
