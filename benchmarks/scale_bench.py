"""Scale: a foreach over 100,000 items and a chain of 50,000 steps, on worker processes as deployed.

The interpreter worker and the handler worker are separate ``worker.py``
processes (the interpreter's peak memory is its own); the workflow is
started like any client would. Printed per workload: wall time, items (or
steps) per second, the runs involved (children and runs continued as new),
the largest history (events and bytes), the longest workflow task (and the
longest that ran no local activity: a task stays open while its local
activities run), the workflow's own work in its busiest task (timed while
every history replays, benchmarks/task_work.py), how long
the largest history takes to replay (``Replayer``, unsandboxed, as the
worker runs it) and the interpreter worker's peak memory (VmHWM). The chain
runs its handler in the interpreter worker's process (local activities);
``--chain-remote`` runs it on the handler worker instead; ``--foreach-local`` runs the foreach's handler
in the interpreter worker too (local activities, as ``ffl run`` does); ``--hand`` runs the foreach
hand-written as well (``bench.HandFanOut`` on a worker process of its own, the same handler worker)
and prints FFL / hand-written. Figures only:
nothing here asserts a time.

    python benchmarks/scale_bench.py [--only foreach,chain] [--items 100000] [--chain 50000]
        [--chain-remote] [--foreach-local] [--hand [--hand-first]] [--address HOST:PORT] [--config JSON]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from interpreter.activities.program_store import LocalProgramStore
from interpreter.activities.value_codec import value_converter
from interpreter.activities.value_store import DirectoryValueStore
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.cli.run_view import loaded_payload
from interpreter.compiler import compile_sources
from interpreter.program.pinned import unpack_program
from interpreter.workflows import FFLWorkflow

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: benchmarks/ is not installed
from benchmarks.history_figures import task_failures, task_spans  # noqa: E402
from benchmarks.servers import temporal_server  # noqa: E402
from benchmarks.task_work import TimedRunner  # noqa: E402

HANDLERS = ROOT / "benchmarks" / "scale_handlers.py"

FAN = """namespace bench {
    event facet Noop(i: Long) => (i: Long)
    workflow Fan(items: Json) => (out: Json) andThen foreach x in $.items {
        e = Noop(i = $.x)
        yield Fan(out = [e.i])
    }
}
"""


def chain_source(count: int) -> str:
    lines = ["namespace bench {", "    event facet Noop(i: Long) => (i: Long)",
             "    workflow Chain() => (last: Long) andThen {", "        s0 = Noop(i = 0)"]
    lines += [f"        s{k} = Noop(i = s{k - 1}.i + 1)" for k in range(1, count)]
    lines += [f"        yield Chain(last = s{count - 1}.i)", "    }", "}", ""]
    return "\n".join(lines)


@dataclass
class Figures:
    name: str
    units: str
    count: int
    wall: float = 0.0
    ok: bool = False
    error: str = ""
    runs: int = 0
    children: int = 0
    continued: int = 0
    largest_events: int = 0
    largest_bytes: int = 0
    longest_task: float = 0.0
    longest_remote_task: float = 0.0  # tasks that ran no local activity: all of it the worker's turn
    longest_task_work: float = 0.0  # the workflow's own work in one task, timed in replay
    longest_activation: float = 0.0
    failed_tasks: int = 0
    replay_seconds: float = 0.0
    replays: list[float] = field(default_factory=list)  # every history's replay, in seconds
    run_seconds: list[float] = field(default_factory=list)  # every history's first to last event
    peak_mb: float = 0.0
    compile_seconds: float = 0.0
    parse_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident set (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def spawn(args: list[str], env: dict[str, str], log: Path, script: Path = ROOT / "worker.py") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(script), *args], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)


async def executions_of(client: Client, workflow_id: str) -> list[tuple[str, str]]:
    """(workflow id, run id) of every run of the logical run: its runs continued as new and all its children."""
    found: list[tuple[str, str]] = []
    async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'"):
        found.append((execution.id, execution.run_id))
    return found


async def all_histories(client: Client, workflow_id: str) -> tuple[list[WorkflowHistory], int, int]:
    """Every history of the logical run (runs continued as new, children, grandchildren), children, continued."""
    histories: list[WorkflowHistory] = []
    children = continued = 0
    pending = [workflow_id]
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        runs = await executions_of(client, current)
        continued += max(0, len(runs) - 1)
        for wid, run_id in runs:
            history = await client.get_workflow_handle(wid, run_id=run_id).fetch_history()
            histories.append(history)
            for event in history.events:
                if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
                    child = event.start_child_workflow_execution_initiated_event_attributes.workflow_id
                    if child not in seen:
                        children += 1
                        pending.append(child)
    return histories, children, continued


async def parse_pinned(history: WorkflowHistory, converter) -> None:
    """Parse the program a history pinned (its LoadProgram result) into this process's cache."""
    scheduled: dict[int, str] = {}
    for event in history.events:
        payload = loaded_payload(event, scheduled)
        if payload is not None:
            [loaded] = await converter.decode([payload], [dict])
            await asyncio.to_thread(unpack_program, loaded)
            return


async def run_workload(client: Client, figures: Figures, workflow: str, inputs: dict, expected: Any,
                       queue: str, timeout: float, interpreter_pid: int, store: DirectoryValueStore,
                       keep: Path | None = None, replay_every: int = 1) -> None:
    workflow_id = f"scale-{figures.name}-{uuid.uuid4().hex[:8]}"
    began = time.monotonic()
    handle = await client.start_workflow(workflow, inputs, id=workflow_id, task_queue=queue)
    try:
        result = await asyncio.wait_for(handle.result(), timeout)
        figures.ok = result == expected
        if not figures.ok:
            figures.error = f"unexpected result {str(result)[:160]}"
    except Exception as err:  # noqa: BLE001 - a benchmark reports failures as figures
        figures.error = f"{type(err).__name__}: {err}"[:300]
        await handle.terminate("benchmark gave up")
    figures.wall = time.monotonic() - began
    figures.peak_mb = peak_memory_mb(interpreter_pid)
    histories, figures.children, figures.continued = await all_histories(client, workflow_id)
    figures.runs = len(histories)
    if keep is not None:  # for profiling a replay later (python -m cProfile ...)
        keep.mkdir(parents=True, exist_ok=True)
        for number, history in enumerate(histories):
            (keep / f"{figures.name}-{number:04d}.json").write_text(history.to_json())
        if store.root.exists():  # the references the histories hold (none when every value stayed inline)
            shutil.copytree(store.root, keep / "values", dirs_exist_ok=True)
    largest = max(histories, key=lambda h: len(h.events))
    figures.largest_events = len(largest.events)
    figures.largest_bytes = max(sum(e.ByteSize() for e in h.events) for h in histories)
    spans = [span for h in histories for span in task_spans(h)]
    figures.longest_task = max((seconds for seconds, _ in spans), default=0.0)
    figures.longest_remote_task = max((seconds for seconds, local in spans if not local), default=0.0)
    figures.failed_tasks = sum(task_failures(h) for h in histories)
    converter = value_converter(store)
    parse_began = time.perf_counter()
    await parse_pinned(largest, converter)  # once per process, as a worker's LoadProgram does for its runs
    figures.parse_seconds = time.perf_counter() - parse_began
    timed = TimedRunner()  # the worker's unsandboxed runner (workflow_runner()), timing each task's work
    replayer = Replayer(workflows=[FFLWorkflow], workflow_runner=timed, data_converter=converter)
    for number, history in enumerate(histories):  # every run of the chain, every child of the foreach
        if number % replay_every and history is not largest:
            continue  # --replay-every: a sample (the largest always), for runs of thousands of histories
        replay_began = time.perf_counter()
        outcome = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        seconds = time.perf_counter() - replay_began
        figures.replays.append(seconds)
        if history is largest:
            figures.replay_seconds = seconds
        if outcome.replay_failure is not None:
            figures.notes.append(f"replay of {history.workflow_id} failed: {outcome.replay_failure}")
        events = history.events
        figures.run_seconds.append(events[-1].event_time.ToDatetime().timestamp()
                                   - events[0].event_time.ToDatetime().timestamp())
    figures.longest_task_work, figures.longest_activation = timed.longest_task, timed.longest_activation


async def run_hand(client: Client, address: str, count: int, handler_queue: str, env: dict[str, str],
                   log: Path, timeout: float) -> Figures:
    """The same fan-out hand-written (``bench.HandFanOut``: children of 1,000 activities, each an ``asyncio.gather``),
    on its own worker process and the same handler worker: the side-by-side figure for the foreach."""
    figures = Figures("hand-written foreach", "items", count)
    queue = handler_queue + "-hand"
    worker = spawn(["--task-queue", queue, "--address", address], env, log, ROOT / "benchmarks" / "hand_worker.py")
    try:
        await asyncio.sleep(3.0)  # the worker polls before the run starts
        print(f"{figures.name}: running {count:,} items ...", file=sys.stderr, flush=True)
        workflow_id = f"scale-hand-{uuid.uuid4().hex[:8]}"
        began = time.monotonic()
        handle = await client.start_workflow(
            "bench.HandFanOut", {"facet": "bench.Noop", "queue": handler_queue, "count": count, "per_child": 1000},
            id=workflow_id, task_queue=queue)
        try:
            figures.ok = await asyncio.wait_for(handle.result(), timeout) == {"out": list(range(count))}
        except Exception as err:  # noqa: BLE001 - a benchmark reports failures as figures
            figures.error = f"{type(err).__name__}: {err}"[:300]
            await handle.terminate("benchmark gave up")
        figures.wall = time.monotonic() - began
        figures.peak_mb = peak_memory_mb(worker.pid)
    finally:
        worker.terminate()
        worker.wait(30)
    histories, figures.children, figures.continued = await all_histories(client, workflow_id)
    figures.runs = len(histories)
    figures.largest_events = max(len(h.events) for h in histories)
    figures.largest_bytes = max(sum(e.ByteSize() for e in h.events) for h in histories)
    spans = [span for h in histories for span in task_spans(h)]
    figures.longest_task = figures.longest_remote_task = max((seconds for seconds, _ in spans), default=0.0)
    figures.failed_tasks = sum(task_failures(h) for h in histories)
    return figures


def print_figures(rows: list[Figures]) -> None:
    for f in rows:
        rate = f.count / f.wall if f.wall else 0.0
        print(f"{f.name}: {f.count:,} {f.units} {'ok' if f.ok else 'FAILED ' + f.error}")
        print(f"  wall {f.wall:.1f} s, {rate:.0f} {f.units}/s; runs involved {f.runs} "
              f"({f.children} child workflows, {f.continued} continued as new)")
        if not f.replays:  # the hand-written side: no replay, the worker's memory
            print(f"  largest history {f.largest_events:,} events, {f.largest_bytes / 1024:.0f} KB; "
                  f"failed tasks {f.failed_tasks}; longest workflow task {f.longest_task * 1000:.0f} ms; "
                  f"worker peak memory {f.peak_mb:.0f} MB")
            continue
        print(f"  largest history {f.largest_events:,} events, {f.largest_bytes / 1024:.0f} KB; "
              f"replays in {f.replay_seconds:.2f} s (program parsed first: {f.parse_seconds:.1f} s); failed tasks {f.failed_tasks}")
        print(f"  longest workflow task {f.longest_task * 1000:.0f} ms (of those that ran no local activity "
              f"{f.longest_remote_task * 1000:.0f} ms); the workflow's own work in one task at most "
              f"{f.longest_task_work * 1000:.0f} ms, in one activation {f.longest_activation * 1000:.0f} ms (replayed)")
        if f.replays:
            ordered = sorted(f.replays)
            print(f"  replay of {len(ordered)} of its {f.runs} histories: median {ordered[len(ordered) // 2]:.2f} s, "
                  f"slowest {ordered[-1]:.2f} s; each history ran for up to {max(f.run_seconds):.1f} s")
        print(f"  interpreter worker peak memory {f.peak_mb:.0f} MB" +
              (f"; compiled in {f.compile_seconds:.1f} s" if f.compile_seconds else ""))
        for note in f.notes:
            print(f"  {note}")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="foreach,chain")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--chain", type=int, default=50_000)
    parser.add_argument("--chain-remote", action="store_true", help="run the chain's handler on the handler worker")
    parser.add_argument("--foreach-local", action="store_true",
                        help="run the foreach's handler in the interpreter worker (local activities)")
    parser.add_argument("--hand", action="store_true",
                        help="also run the foreach hand-written (children of 1,000, each an asyncio.gather), side by side")
    parser.add_argument("--hand-first", action="store_true", help="with --hand: the hand-written run goes first")
    parser.add_argument("--address", help="an existing Temporal server (default: start a local dev server)")
    parser.add_argument("--config", default="{}", help="runtime configuration JSON for the interpreter worker")
    parser.add_argument("--timeout", type=float, default=7200.0)
    parser.add_argument("--handler-slots", type=int, default=1000)
    parser.add_argument("--replay-every", type=int, default=1,
                        help="replay every Nth history (and the largest) instead of all of them")
    parser.add_argument("--keep-histories", type=Path, help="write every history of each run into this directory")
    args = parser.parse_args(argv)
    wanted = [name.strip() for name in args.only.split(",") if name.strip()]
    rows: list[Figures] = []
    processes: list[subprocess.Popen] = []
    with temporal_server(args.address) as address:
        try:
            with tempfile.TemporaryDirectory(prefix="ffl-scale-") as tmp:
                tmp_path = Path(tmp)
                store = DirectoryValueStore(tmp_path / "values")
                env = {**os.environ, "FFL_VALUE_STORE": str(store.root), "FFL_REGISTRY": str(tmp_path / "registry")}
                registry = LocalProgramStore(tmp_path / "registry")
                client = await connect(ConnectOptions(address=address), retry_for=30.0,
                                       data_converter=value_converter(store))
                queue = "scale-" + uuid.uuid4().hex[:8]
                handler_queue = queue + "-h"
                config = {"queues": {"bench": handler_queue}, **json.loads(args.config)}
                for name in wanted:
                    figures = Figures(name, "items" if name == "foreach" else "steps",
                                      args.items if name == "foreach" else args.chain)
                    began = time.perf_counter()
                    if name == "foreach":
                        source, workflow = FAN, "bench.Fan"
                        inputs, expected = {"items": list(range(args.items))}, {"out": list(range(args.items))}
                    else:
                        source, workflow = chain_source(args.chain), "bench.Chain"
                        inputs, expected = {}, {"last": args.chain - 1}
                    registry.publish(compile_sources([(f"{name}.ffl", source)]))
                    figures.compile_seconds = time.perf_counter() - began if name == "chain" else 0.0
                    local = not args.chain_remote if name == "chain" else args.foreach_local
                    config_file = tmp_path / f"{name}-config.json"
                    worker_config = dict(config)
                    if not local:
                        worker_config["remote_facets"] = ["bench.Noop"]
                    config_file.write_text(json.dumps(worker_config))
                    run_queue = f"{queue}-{name}"
                    interpreter = spawn(["--task-queue", run_queue, "--interpreter", "--config", str(config_file),
                                         "--handlers", str(HANDLERS), "--address", address,
                                         "--max-concurrent-activities", str(args.handler_slots)],
                                        env, tmp_path / f"{name}-interpreter.log")
                    handlers = spawn(["--task-queue", handler_queue, "--handlers", str(HANDLERS), "--address", address,
                                      "--max-concurrent-activities", str(args.handler_slots)],
                                     env, tmp_path / f"{name}-handlers.log")
                    processes += [interpreter, handlers]
                    await asyncio.sleep(3.0)  # both workers poll before the run starts
                    side_by_side = args.hand and name == "foreach" and not args.foreach_local
                    hand = None
                    if side_by_side and args.hand_first:
                        hand = await run_hand(client, address, args.items, handler_queue, env,
                                              tmp_path / "hand-worker.log", args.timeout)
                    print(f"{name}: running {figures.count:,} {figures.units} ...", file=sys.stderr, flush=True)
                    await run_workload(client, figures, workflow, inputs, expected, run_queue, args.timeout,
                                       interpreter.pid, store, args.keep_histories, args.replay_every)
                    if side_by_side and hand is None:
                        hand = await run_hand(client, address, args.items, handler_queue, env,
                                              tmp_path / "hand-worker.log", args.timeout)
                    rows += [figures, hand] if hand is not None else [figures]
                    for process in (interpreter, handlers):
                        process.terminate()
                        process.wait(30)
                    print_figures(rows[-2:] if rows[-1] is not figures else [figures])
                    sys.stdout.flush()
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
    print("\nsummary")
    print_figures(rows)
    walls = {f.name: f.wall for f in rows if f.ok}
    if "foreach" in walls and "hand-written foreach" in walls:
        print(f"foreach, FFL / hand-written: {walls['foreach'] / walls['hand-written foreach']:.2f}")
    return 0 if all(f.ok for f in rows) else 1


if __name__ == "__main__":
    status = asyncio.run(main())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # temporalio's native threads can crash a finishing interpreter
