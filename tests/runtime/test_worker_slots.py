"""A worker's slots: workflow tasks as the machine allows (or a fixed number), activities as given.

The fast tests read the options build_worker gives the SDK; the slow one runs
sixteen runs of local activities that wait, on a real server, under the default.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from temporalio.worker import FixedSizeSlotSupplier, ResourceBasedSlotSupplier

from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.program_store import LocalProgramStore
from interpreter.cli.worker_main import build_worker
from interpreter.cli.worker_slots import MIN_WORKFLOW_SLOTS, slot_options
from interpreter.compiler import compile_sources
from interpreter.program.config import RuntimeConfig

ROOT = Path(__file__).resolve().parents[2]


def suppliers(options: dict) -> tuple:
    tuner = options["tuner"]
    return tuner.workflow_slot_supplier, tuner.activity_slot_supplier


def test_workflow_tasks_follow_the_machine_unless_fixed() -> None:
    workflows, activities = suppliers(slot_options())
    assert isinstance(workflows, ResourceBasedSlotSupplier)
    assert workflows.slot_config.minimum_slots == MIN_WORKFLOW_SLOTS
    assert workflows.slot_config.maximum_slots and workflows.slot_config.maximum_slots > MIN_WORKFLOW_SLOTS
    assert isinstance(activities, FixedSizeSlotSupplier) and activities.num_slots == 100  # the SDK's default

    workflows, activities = suppliers(slot_options(max_concurrent_activities=1000, max_concurrent_workflow_tasks=3))
    assert isinstance(workflows, FixedSizeSlotSupplier) and workflows.num_slots == 3
    assert activities.num_slots == 1000


def test_fewer_workflow_slots_than_the_two_queues_need_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        slot_options(max_concurrent_workflow_tasks=1)
    done = subprocess.run([sys.executable, str(ROOT / "worker.py"), "--task-queue", "q",
                           "--max-concurrent-workflow-tasks", "1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "--max-concurrent-workflow-tasks: at least 2" in done.stderr and "Traceback" not in done.stderr


SOURCE = """namespace s {
  event facet Wait(n: Long) => (n: Long)
  workflow Main(n: Long) => (n: Long) andThen {
    a = Wait(n = $.n)
    b = Wait(n = a.n)
    yield Main(n = b.n)
  }
}
"""


async def test_runs_of_local_activities_that_wait_are_not_queued_behind_two_slots(temporal_client, tmp_path) -> None:
    # A task of local activities holds its slot until they finish: with two slots, these sixteen runs would
    # wait for each other (at most two handlers at once). As the machine allows, an idle one takes them all.
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(compile_sources([("s.ffl", SOURCE)]))
    running, most = 0, 0
    everyone = asyncio.Event()

    async def wait(payload: dict) -> dict:
        nonlocal running, most
        running += 1
        most = max(most, running)
        if most >= 4:
            everyone.set()
        try:
            await asyncio.wait_for(everyone.wait(), 5.0)
        except TimeoutError:
            pass
        finally:
            running -= 1
        return {"n": payload["n"] + 1}

    registry = HandlerRegistry()
    registry.register("s.Wait", wait)
    queue = "ffl-" + uuid.uuid4().hex[:8]
    async with build_worker(temporal_client, queue, registry, store=store, config=RuntimeConfig(), interpreter=True):
        handles = [await temporal_client.start_workflow("s.Main", {"n": n}, id=f"slots-{uuid.uuid4().hex[:8]}",
                                                        task_queue=queue) for n in range(16)]
        results = await asyncio.gather(*(handle.result() for handle in handles))
    assert results == [{"n": n + 2} for n in range(16)]
    assert most >= 4, f"at most {most} handlers ran at once"
