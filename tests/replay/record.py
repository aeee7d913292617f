"""Record the histories of a release: ``python -m tests.replay.record VERSION``.

Runs the last case of every conformance folder (plus a cancelled run, a
mirrored run, the durable-control runs of ``control_cases`` and the
scaled runs of ``scale_cases``, every history of each) on a fresh dev server with the interpreter as it is now, and
writes each history as JSON under ``tests/replay/histories/VERSION/``. Run it
at every release and commit the folder: ``test_release_histories`` replays
every recorded release with the current code, so a change that would break
running workflows fails the suite instead of production.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from unittest import mock

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.converter import DataConverter
from temporalio.worker import Worker

from interpreter.activities import interpreter_side
from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.local import start_temporal
from interpreter.program.config import RuntimeConfig
from interpreter.workflows import FFLWorkflow, workflow_runner
from tests import conformance_suite as suite
from tests.replay import control_cases, scale_cases
from tests.runtime.harness import FAST_RETRY, compile_text, isolated_config, registry_of, run_ffl

HISTORIES = Path(__file__).resolve().parent / "histories"
WORKFLOW_IDS = "workflow-ids.json"
"""Per release folder: the workflow id of each history that must replay under its own id (children's ids)."""

CANCELLED = """namespace rec {
    event facet Wait(s: Long) => (done: Boolean)
    workflow Cancelled(n: Long) => (done: Boolean) andThen {
        w = Wait(s = $.n)
        yield Cancelled(done = w.done)
    }
}"""


async def _wait(payload: dict) -> dict:
    await asyncio.sleep(payload["s"])
    return {"done": True}


class _Sink:
    """A mirror sink that keeps nothing: the run records its Mirror activities in history."""

    def write(self, records: list) -> None:
        del records


async def record(version: str, client: Client) -> list[Path]:
    target = HISTORIES / version
    target.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for folder in suite.valid_folders():
            sources = dict(suite.sources(folder))
            case = suite.cases_of(folder)[-1]
            run = await run_ffl(client, sources, case.workflow, case.inputs,
                                handlers=suite.handlers(folder), tmp_path=Path(tmp) / folder.name, timeout=60)
            runs.append((folder.name, run))
            if folder.name == "dataflow":
                mirrored = await run_ffl(client, sources, case.workflow, case.inputs,
                                         handlers=suite.handlers(folder), tmp_path=Path(tmp) / "mirrored",
                                         timeout=60, mirror=_Sink(),
                                         config=RuntimeConfig(retry=FAST_RETRY, mirror=True))
                runs.append(("dataflow-mirrored", mirrored))
        handles = [(name, run.handle) for name, run in runs]
        handles.append(("cancelled", await _cancelled(client, Path(tmp) / "cancelled")))
        for name, record_case in control_cases.CASES.items():  # timers, signals, policies, cleanup
            handles.append((name, await record_case(client, Path(tmp) / name)))
        histories = [(name, await handle.fetch_history()) for name, handle in handles]
        ids: dict[str, str] = {}  # a history whose decisions use its workflow id replays under that id
        for local in (False, True):  # children and continue-as-new; then local activities too
            name = "scaled-local" if local else "scaled"
            for part, history in await scale_cases.record_scaled(client, Path(tmp) / name, local=local):
                histories.append((f"{name}-{part}", history))
                ids[f"{name}-{part}"] = history.workflow_id  # child ids are derived from it
        # a run whose program LoadProgram was slow to load (forced: the recorded programs load in milliseconds)
        with mock.patch.object(interpreter_side, "SLOW_LOAD_SECONDS", 0.0):
            folder = suite.folder("dataflow")
            case = suite.cases_of(folder)[-1]
            settled = await run_ffl(client, dict(suite.sources(folder)), case.workflow, case.inputs,
                                    handlers=suite.handlers(folder), tmp_path=Path(tmp) / "settled", timeout=60,
                                    local=True)
        histories.append(("dataflow-settled", await settled.handle.fetch_history()))
        for name, history in histories:
            path = target / f"{name}.json"
            path.write_text(history.to_json() + "\n", encoding="utf-8")
            written.append(path)
        if ids:
            path = target / WORKFLOW_IDS
            path.write_text(json.dumps(ids, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            written.append(path)
    return written


async def _cancelled(client: Client, tmp_path: Path) -> WorkflowHandle:
    """A run cancelled while its handler waits: its history ends in WorkflowExecutionCanceled."""
    program = compile_text(CANCELLED)
    queue = "rec-" + uuid.uuid4().hex[:8]
    store = LocalProgramStore(tmp_path / "registry")
    store.publish(program)
    config = isolated_config(program, queue + "-h")
    registry = registry_of({"rec.Wait": _wait})
    async with (
        Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
               activities=build_interpreter_activities(store, config)),
        Worker(client, task_queue=queue + "-h", activities=[build_handler_activity(registry, queue + "-h")]),
    ):
        handle = await client.start_workflow("rec.Cancelled", {"n": 30}, id="rec-" + uuid.uuid4().hex[:10],
                                             task_queue=queue)
        await asyncio.sleep(1.0)
        await handle.cancel()
        with contextlib.suppress(WorkflowFailureError):
            await asyncio.wait_for(handle.result(), 30)
    return handle


async def _main(version: str) -> int:
    service = start_temporal(ui=False)
    try:
        client = await connect(ConnectOptions(address=service.address), retry_for=30.0,
                               data_converter=DataConverter.default)
        for path in await record(version, client):
            print(path.relative_to(HISTORIES.parent.parent.parent))
    finally:
        service.stop()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m tests.replay.record VERSION", file=sys.stderr)
        sys.exit(2)
    status = asyncio.run(_main(sys.argv[1]))
    sys.stdout.flush()
    os._exit(status)
