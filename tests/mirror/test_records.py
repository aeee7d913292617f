"""The mirror's typed records are the JSON objects every release sent: a batch of an older run reads as one."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from interpreter.activities.mirror.documents import build_ops
from interpreter.program.constants import MIRROR_ACTIVITY
from interpreter.program.mirror_records import LogRecord, RunnerRecord, ScheduledTaskRecord, StepRecord

HISTORIES = Path(__file__).resolve().parents[1] / "replay" / "histories"
KINDS = {"runner": RunnerRecord, "step": StepRecord, "task": ScheduledTaskRecord, "log": LogRecord}


def sent_records(path: Path) -> list[dict]:
    """Every record the run's Mirror activities carried, as recorded in its history."""
    records = []
    for event in json.loads(path.read_text(encoding="utf-8"))["events"]:
        scheduled = event.get("activityTaskScheduledEventAttributes")
        if scheduled and scheduled["activityType"]["name"] == MIRROR_ACTIVITY:
            for payload in scheduled["input"]["payloads"]:
                records += json.loads(base64.b64decode(payload["data"]))
    return records


@pytest.mark.parametrize("release", sorted(p.name for p in HISTORIES.iterdir() if (p / "dataflow-mirrored.json").exists()))
def test_every_record_a_release_sent_has_the_keys_of_its_typed_record(release):
    records = sent_records(HISTORIES / release / "dataflow-mirrored.json")
    assert {r["kind"] for r in records} >= {"runner", "step", "task"}
    for record in records:
        typed = KINDS[record["kind"]]
        keys = set(record)
        assert typed.__required_keys__ - ({"seq"} if release == "0.1.0" else set()) <= keys <= typed.__required_keys__ | typed.__optional_keys__, record
        assert build_ops(record)  # and the writer reads it



async def test_every_record_a_run_sends_today_has_the_keys_of_its_typed_record(temporal_client, tmp_path):
    from interpreter.program.config import RuntimeConfig

    from ..runtime.harness import FAST_RETRY, run_ffl
    from ..runtime.test_workflow_runtime import ListSink
    from ..scale.test_children import FAN, add

    sink = ListSink()
    run = await run_ffl(temporal_client, FAN, "fan.Fan", {"items": [1, 2], "k": 1}, handlers={"fan.Add": add},
                        tmp_path=tmp_path, config=RuntimeConfig(retry=FAST_RETRY, mirror=True), mirror=sink)
    assert run.error is None, run.message
    assert any("foreach" in record for record in sink.records)  # an iteration block's optional key
    for record in sink.records:
        typed = KINDS[record["kind"]]
        assert typed.__required_keys__ <= set(record) <= typed.__required_keys__ | typed.__optional_keys__, record
