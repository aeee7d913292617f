"""200 concurrent runs of a conformance program on real worker processes: every result exact, no failed task.

The figures (runs and activities per second) are printed; the assertions are
on correctness only — speed belongs to the benchmarks. "No failed workflow
tasks" is read from every run's history: not one WorkflowTaskFailed or
WorkflowTaskTimedOut event.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid

import pytest
from temporalio.api.enums.v1 import EventType

from interpreter.activities.program_store import LocalProgramStore
from interpreter.compiler import compile_files
from tests.paths import CONFORMANCE
from tests.runtime.test_worker import WorkerProcess

pytestmark = pytest.mark.slow

RUNS = 200
CASES = CONFORMANCE / "valid" / "dataflow"
BAD_EVENTS = {EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED, EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT}


async def test_200_concurrent_runs_are_all_exact_with_no_failed_workflow_task(temporal_client, temporal_service,
                                                                              tmp_path):
    program = compile_files([str(CASES / "program.ffl")])
    registry = tmp_path / "registry"
    LocalProgramStore(registry).publish(program)
    cases = json.loads((CASES / "cases.json").read_text())
    tag = uuid.uuid4().hex[:8]
    queue, handler_queue = f"ffl-load-{tag}", f"calc-load-{tag}"
    (tmp_path / "config.json").write_text(json.dumps({"queues": {"calc": handler_queue}}))
    common = ["--registry", str(registry), "--config", str(tmp_path / "config.json")]
    env = {"TEMPORAL_ADDRESS": temporal_service.address, "FFL_REGISTRY": ""}
    processes = [WorkerProcess("--task-queue", queue, "--interpreter", *common, env=env),
                 WorkerProcess("--task-queue", handler_queue, "--handlers", str(CASES / "handlers.py"), *common,
                               env=env)]  # fmt: skip
    try:
        for process in processes:
            process.wait_ready()
        chosen = [cases[index % len(cases)] for index in range(RUNS)]
        started = time.monotonic()
        handles = await asyncio.gather(*(
            temporal_client.start_workflow(case["workflow"], case["inputs"], id=f"load-{tag}-{index}",
                                           task_queue=queue)
            for index, case in enumerate(chosen)))  # fmt: skip
        results = await asyncio.wait_for(asyncio.gather(*(h.result() for h in handles)), 240)
        elapsed = time.monotonic() - started
        assert [r for r in results] == [case["expect"]["outputs"] for case in chosen]
        bad = []
        activities = 0
        for handle in handles:
            async for event in handle.fetch_history_events():
                if event.event_type in BAD_EVENTS:
                    bad.append((handle.id, EventType.Name(event.event_type)))
                activities += event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
        assert bad == []
        print(f"\n{RUNS} concurrent runs of {chosen[0]['workflow']}: {elapsed:.1f} s, {RUNS / elapsed:.1f} runs/s, "
              f"{activities / elapsed:.0f} activities/s ({activities} activities)")
        for process in processes:
            assert process.stop() == 0
    finally:
        for process in processes:
            if process.proc.poll() is None:
                process.stop()
