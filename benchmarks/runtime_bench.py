"""Scale figures for the interpreter workflow on a local dev server.

Runs three generated FFL programs with in-process workers and no-op handlers,
then reads each run's history and prints, per program: compile time, wall
time, steps/second, workflow tasks (count, failed or timed out, max and p95
duration from WorkflowTaskStarted → WorkflowTaskCompleted), history
length/size, the steps query's size and the time to replay the whole history
(what a worker pays after a cache eviction, within the 10 s task timeout).
The SDK fails a workflow activation that runs longer than 2 s, so the max
workflow-task duration is the figure that matters. Figures only, no asserts
on time (results are checked, though).

- ``layered``: LAYERS x WIDTH event steps in one block, each reading two
  steps of the previous layer, and a final yield of the last layer;
- ``foreach``: a foreach over N elements, one event step per iteration;
- ``parallel``: N independent no-op event steps in one block (the design
  measured 500 parallel no-op activities in 2.3–2.6 s on an in-memory server).

    python benchmarks/runtime_bench.py [--layers 50 --width 100 --foreach 5000 --parallel 500]
        [--only layered,foreach,parallel] [--address HOST:PORT] [--keep-histories DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.api.history.v1 import History
from temporalio.client import Client
from temporalio.converter import DataConverter
from temporalio.worker import Replayer, Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.compiler import compile_sources
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.model import Program
from interpreter.workflows import FFLWorkflow, workflow_runner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: benchmarks/ is not installed
from benchmarks.history_figures import percentile, task_durations, task_failures  # noqa: E402
from benchmarks.servers import temporal_server  # noqa: E402

MODULUS = 1_000_003
"""Layered sums are taken modulo a prime so values stay small however deep the graph."""


# ---------------------------------------------------------------------- programs


@dataclass
class Case:
    name: str
    source: str
    workflow: str
    inputs: dict[str, Any]
    expected: dict[str, Any]
    steps: int
    handlers: dict[str, Callable] = field(default_factory=dict)


async def _add(payload: dict) -> dict:
    return {"sum": (payload["x"] + payload["y"]) % MODULUS}


async def _echo(payload: dict) -> dict:
    return {"v": payload["v"]}


async def _noop(payload: dict) -> dict:
    return {}


def layered(layers: int, width: int) -> Case:
    """A layered DAG: step (l, i) adds steps (l-1, i) and (l-1, i+1 mod width)."""
    lines = ["namespace bench.layered {",
             "    event facet Add(x: Long, y: Long) => (sum: Long)",
             "    workflow Graph(seed: Long = 1) => (values: Json) andThen {"]
    values = [(1 + i) % MODULUS for i in range(width)]
    for i in range(width):
        lines.append(f"        s0_{i} = Add(x = $.seed, y = {i})")
    for layer in range(1, layers):
        for i in range(width):
            j = (i + 1) % width
            lines.append(f"        s{layer}_{i} = Add(x = s{layer - 1}_{i}.sum, y = s{layer - 1}_{j}.sum)")
        values = [(values[i] + values[(i + 1) % width]) % MODULUS for i in range(width)]
    last = ", ".join(f"s{layers - 1}_{i}.sum" for i in range(width))
    lines += [f"        yield Graph(values = [{last}])", "    }", "}", ""]
    return Case("layered", "\n".join(lines), "bench.layered.Graph", {"seed": 1}, {"values": values},
                layers * width, {"bench.layered.Add": _add})


def foreach(count: int) -> Case:
    source = """namespace bench.fan {
    event facet Echo(v: Long) => (v: Long)
    workflow Fan(items: Json) => (out: Json) andThen foreach x in $.items {
        e = Echo(v = $.x)
        yield Fan(out = [e.v])
    }
}
"""
    items = list(range(count))
    return Case("foreach", source, "bench.fan.Fan", {"items": items}, {"out": items}, count,
                {"bench.fan.Echo": _echo})


def parallel(count: int) -> Case:
    lines = ["namespace bench.par {",
             "    event facet Noop(i: Long)",
             "    workflow Par() => (done: Boolean) andThen {"]
    lines += [f"        n{i} = Noop(i = {i})" for i in range(count)]
    lines += ["        yield Par(done = true)", "    }", "}", ""]
    return Case("parallel", "\n".join(lines), "bench.par.Par", {}, {"done": True}, count,
                {"bench.par.Noop": _noop})


# ---------------------------------------------------------------------- running


@dataclass
class Figures:
    name: str
    steps: int
    compile_s: float
    wall_s: float = 0.0
    ok: bool = False
    error: str = ""
    tasks: int = 0
    task_max_ms: float = 0.0
    task_p95_ms: float = 0.0
    task_total_ms: float = 0.0
    task_failures: int = 0
    events: int = 0
    history_bytes: int = 0
    query_kb: float = 0.0
    replay_s: float = 0.0

    @property
    def rate(self) -> float:
        return self.steps / self.wall_s if self.wall_s else 0.0


class CountingSink:
    """A mirror sink that only counts: the workflow's side of mirroring, without a database."""

    def __init__(self) -> None:
        self.records = 0

    def write(self, records: list[dict]) -> None:
        self.records += len(records)


async def run_case(client: Client, case: Case, program: Program, figures: Figures, tmp: Path, *,
                   timeout: float, keep: Path | None, max_pending: int | None, mirror: bool) -> None:
    queue = "bench-" + uuid.uuid4().hex[:8]
    handler_queue = queue + "-handlers"
    store = LocalProgramStore(tmp / "registry")
    store.publish(program)
    retry = RetryConfig(maximum_attempts=1, start_to_close_seconds=60.0)
    config = RuntimeConfig(retry=retry, queues={name: handler_queue for name in case.handlers})
    if max_pending is not None:
        config.max_pending_activities = max_pending
    config.mirror = mirror
    sink = CountingSink() if mirror else None
    registry = HandlerRegistry()
    for name, fn in case.handlers.items():
        registry.register(name, fn)
    interpreter = Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config, sink))
    handlers = Worker(client, task_queue=handler_queue, activities=[build_handler_activity(registry, handler_queue)])
    async with interpreter, handlers:
        handle = await client.start_workflow(case.workflow, case.inputs, id=f"bench-{case.name}-{uuid.uuid4().hex[:8]}",
                                             task_queue=queue)
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(handle.result(), timeout)
            figures.ok = result == case.expected
            if not figures.ok:
                figures.error = f"unexpected result: {json.dumps(result)[:200]}"
        except Exception as err:  # noqa: BLE001 - a benchmark reports failures as figures
            figures.error = f"{type(err).__name__}: {err}"[:300]
            try:
                await handle.terminate("benchmark gave up")
            except Exception:  # noqa: BLE001 - already closed
                pass
        figures.wall_s = time.monotonic() - started
        try:  # while the workers still serve the run
            steps = await handle.query("steps")
            figures.query_kb = len(json.dumps(steps)) / 1024
        except Exception as err:  # noqa: BLE001 - e.g. a query result over the payload limit
            figures.ok = False
            figures.error = (figures.error + f"; steps query: {type(err).__name__}: {err}").strip("; ")
    history = await handle.fetch_history()
    began = time.perf_counter()
    await Replayer(workflows=[FFLWorkflow], workflow_runner=workflow_runner()).replay_workflow(history)
    figures.replay_s = time.perf_counter() - began
    proto = History(events=history.events)
    durations = task_durations(proto)
    figures.tasks = len(durations)
    figures.task_max_ms = max(durations, default=0.0) * 1000
    figures.task_p95_ms = percentile(durations, 0.95) * 1000
    figures.task_total_ms = sum(durations) * 1000
    figures.task_failures = task_failures(proto)
    figures.events = len(history.events)
    figures.history_bytes = proto.ByteSize()
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{case.name}.json").write_text(history.to_json())


def print_table(rows: list[Figures]) -> None:
    header = (f"{'case':<10}{'steps':>7}{'compile s':>11}{'wall s':>9}{'steps/s':>9}{'wf tasks':>10}"
              f"{'failed':>7}{'max ms':>9}{'p95 ms':>9}{'sum ms':>9}{'events':>8}{'hist KB':>9}{'query KB':>9}"
              f"{'replay s':>9}  result")
    print(header)
    print("-" * len(header))
    for f in rows:
        print(f"{f.name:<10}{f.steps:>7}{f.compile_s:>11.2f}{f.wall_s:>9.2f}{f.rate:>9.0f}{f.tasks:>10}"
              f"{f.task_failures:>7}{f.task_max_ms:>9.0f}{f.task_p95_ms:>9.0f}{f.task_total_ms:>9.0f}{f.events:>8}"
              f"{f.history_bytes / 1024:>9.0f}{f.query_kb:>9.0f}{f.replay_s:>9.2f}  {'ok' if f.ok else f.error}")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=50)
    parser.add_argument("--width", type=int, default=100)
    parser.add_argument("--foreach", type=int, default=5000, dest="foreach_count")
    parser.add_argument("--parallel", type=int, default=500, dest="parallel_count")
    parser.add_argument("--only", default="layered,foreach,parallel", help="comma-separated cases to run")
    parser.add_argument("--address", help="an existing Temporal server (default: start a local dev server)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each run")
    parser.add_argument("--max-pending", type=int, help="RuntimeConfig.max_pending_activities (default: its default)")
    parser.add_argument("--mirror", action="store_true", help="emit mirror records (to a sink that counts them)")
    parser.add_argument("--keep-histories", type=Path, help="write each run's history JSON into this directory")
    args = parser.parse_args(argv)

    makers = {"layered": lambda: layered(args.layers, args.width), "foreach": lambda: foreach(args.foreach_count),
              "parallel": lambda: parallel(args.parallel_count)}
    wanted = [name.strip() for name in args.only.split(",") if name.strip()]
    rows: list[Figures] = []
    with temporal_server(args.address) as address:
        client = await connect(ConnectOptions(address=address), retry_for=30.0,
                               data_converter=DataConverter.default)
        with tempfile.TemporaryDirectory(prefix="ffl-bench-") as tmp:
            for name in wanted:
                case = makers[name]()
                began = time.perf_counter()
                program = compile_sources([(f"{name}.ffl", case.source)])
                figures = Figures(name, case.steps, time.perf_counter() - began)
                await run_case(client, case, program, figures, Path(tmp) / name, timeout=args.timeout,
                               keep=args.keep_histories, max_pending=args.max_pending, mirror=args.mirror)
                rows.append(figures)
                print(f"{name}: {figures.wall_s:.1f} s, max workflow task {figures.task_max_ms:.0f} ms, "
                      f"{'ok' if figures.ok else figures.error}", file=sys.stderr, flush=True)
    print_table(rows)
    return 0 if all(f.ok for f in rows) else 1


if __name__ == "__main__":
    status = asyncio.run(main())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # temporalio's native threads can crash a finishing interpreter
