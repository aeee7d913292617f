"""FFL against hand-written Temporal, side by side on one dev server: wall times and their ratio.

Each workload runs once as an FFL program (interpreter worker, default
RuntimeConfig) and once as a hand-written workflow (benchmarks/handwritten.py:
a loop or an ``asyncio.gather`` of ``execute_activity``), both calling the same
activities on one handler worker — by default a separate process, as in a
deployment, with enough slots for every activity at once. The order of the
two alternates between repeats; the figure is the median. Printed per run:
wall seconds, the most handler activities in flight, workflow tasks the
server force-closed (buffered events past its limit; each costs a replay) and
the longest workflow task. Figures only: nothing here asserts a time.

Workloads: ``chain`` (200 no-op steps, each reading the last), ``local``
(the same chain with the handler served by the workflow's own worker: FFL's
local activities against a hand-written loop of ``execute_local_activity``),
``independent`` (1,000 no-op steps in one block), ``foreach`` (foreach over
1,000, no-op handler), ``slow`` (foreach over 1,000, the handler awaits 1 s),
``slow10k`` (foreach over 10,000, the handler awaits 1 s; FFL fans out through
child workflows of 1,000 by default, the hand-written side starts ten children
of 1,000 at once). Targets: FFL / hand-written <= 1.10 for chain, local and
independent, <= 1.25 for every foreach.

    python benchmarks/overhead_bench.py [--only chain,local,independent,foreach,slow,slow10k] [--repeat 1]
        [--chain 200] [--steps 1000] [--items 1000] [--big 10000] [--sleep 1.0] [--in-process]
        [--address HOST:PORT] [--keep-histories DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from interpreter.activities.dispatch import build_handler_activity
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.activities.value_codec import value_converter
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.cli.worker_slots import slot_options
from interpreter.compiler import compile_sources
from interpreter.program.config import RuntimeConfig
from interpreter.workflows import FFLWorkflow, workflow_runner

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: benchmarks/ is not installed
from benchmarks.handwritten import WORKFLOWS  # noqa: E402
from benchmarks.history_figures import force_closed, most_pending_activities, task_durations  # noqa: E402
from benchmarks.servers import temporal_server  # noqa: E402

NOOP, SLOW = "bench.Noop", "bench.Slow"
SLEEP_ENV = "FFL_BENCH_SLEEP"


# ---------------------------------------------------------------------- handlers (the same for both sides)


async def noop(payload: dict) -> dict:
    return {"i": payload["i"]}


async def slow(payload: dict) -> dict:
    await asyncio.sleep(float(os.environ.get(SLEEP_ENV, "1.0")))
    return {"i": payload["i"]}


def registry() -> HandlerRegistry:
    handlers = HandlerRegistry()
    handlers.register(NOOP, noop)
    handlers.register(SLOW, slow)
    return handlers


# ---------------------------------------------------------------------- workloads


@dataclass
class Workload:
    name: str
    source: str
    workflow: str
    inputs: dict[str, Any]
    expected: dict[str, Any]
    hand: str  # the hand-written workflow type
    hand_args: dict[str, Any]
    target: float
    facet: str = NOOP
    hand_expected: dict[str, Any] | None = None  # when the hand-written result differs in shape
    local: bool = False  # FFL's interpreter serves the handler itself (local activities)


def chain(count: int) -> Workload:
    lines = ["namespace bench {", "    event facet Noop(i: Long) => (i: Long)",
             "    workflow Chain() => (last: Long) andThen {", "        s0 = Noop(i = 0)"]
    lines += [f"        s{k} = Noop(i = s{k - 1}.i + 1)" for k in range(1, count)]
    lines += [f"        yield Chain(last = s{count - 1}.i)", "    }", "}", ""]
    return Workload("chain", "\n".join(lines), "bench.Chain", {}, {"last": count - 1}, "bench.HandChain",
                    {"count": count, "facet": NOOP}, 1.10)


def local_chain(count: int) -> Workload:
    workload = chain(count)
    workload.name, workload.hand, workload.local = "local", "bench.HandLocalChain", True
    return workload


def independent(count: int) -> Workload:
    lines = ["namespace bench {", "    event facet Noop(i: Long) => (i: Long)",
             "    workflow Par() => (done: Boolean) andThen {"]
    lines += [f"        n{k} = Noop(i = {k})" for k in range(count)]
    lines += ["        yield Par(done = true)", "    }", "}", ""]
    return Workload("independent", "\n".join(lines), "bench.Par", {}, {"done": True}, "bench.HandGather",
                    {"count": count, "facet": NOOP}, 1.10, hand_expected={"out": list(range(count))})


FAN = """namespace bench {
    event facet Noop(i: Long) => (i: Long)
    event facet Slow(i: Long) => (i: Long)
    workflow Fan(items: Json) => (out: Json) andThen foreach x in $.items {
        e = Noop(i = $.x)
        yield Fan(out = [e.i])
    }
    workflow SlowFan(items: Json) => (out: Json) andThen foreach x in $.items {
        e = Slow(i = $.x)
        yield SlowFan(out = [e.i])
    }
}
"""


def foreach(count: int, *, slow_handler: bool) -> Workload:
    items = list(range(count))
    facet = SLOW if slow_handler else NOOP
    return Workload("slow" if slow_handler else "foreach", FAN, "bench.SlowFan" if slow_handler else "bench.Fan",
                    {"items": items}, {"out": items}, "bench.HandGather", {"count": count, "facet": facet}, 1.25,
                    facet)


def fan_out(count: int, per_child: int = 1000) -> Workload:
    """A foreach too large for one history: FFL's children (the default threshold) against hand-written ones."""
    items = list(range(count))
    return Workload("slow10k", FAN, "bench.SlowFan", {"items": items}, {"out": items}, "bench.HandFanOut",
                    {"count": count, "facet": SLOW, "per_child": per_child}, 1.25, SLOW)


# ---------------------------------------------------------------------- running


@dataclass
class Measure:
    wall: float = 0.0
    in_flight: int = 0
    force_closed: int = 0
    task_max_ms: float = 0.0
    ok: bool = True
    error: str = ""


@dataclass
class Row:
    workload: Workload
    ffl: list[Measure] = field(default_factory=list)
    hand: list[Measure] = field(default_factory=list)


async def children_of(client: Client, history: Any) -> list[Any]:
    """The histories of a run's child workflows (and theirs)."""
    from temporalio.api.enums.v1 import EventType

    found = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            child = await client.get_workflow_handle(
                event.start_child_workflow_execution_initiated_event_attributes.workflow_id).fetch_history()
            found += [child, *await children_of(client, child)]
    return found


async def measure(client: Client, workflow: str, args: Any, queue: str, expected: dict, facet: str,
                  timeout: float, keep: Path | None = None) -> Measure:
    handle = await client.start_workflow(workflow, args, id=f"bench-{uuid.uuid4().hex[:10]}", task_queue=queue)
    figures = Measure()
    began = time.monotonic()
    try:
        result = await asyncio.wait_for(handle.result(), timeout)
        figures.ok = result == expected
        figures.error = "" if figures.ok else f"unexpected result {str(result)[:120]}"
    except Exception as err:  # noqa: BLE001 - a benchmark reports failures as figures
        figures.ok, figures.error = False, f"{type(err).__name__}: {err}"[:200]
        await handle.terminate("benchmark gave up")
    figures.wall = time.monotonic() - began
    history = await handle.fetch_history()
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{workflow}-{handle.id}.json").write_text(history.to_json())
    histories = [history, *await children_of(client, history)]
    figures.in_flight = sum(most_pending_activities(h, {facet}) for h in histories)  # children: at most this many
    figures.force_closed = sum(force_closed(h) for h in histories)
    figures.task_max_ms = max(max(task_durations(h), default=0.0) for h in histories) * 1000
    return figures


def spawn_handlers(address: str, queue: str, slots: int, sleep: float) -> subprocess.Popen:
    env = {**os.environ, SLEEP_ENV: str(sleep)}
    return subprocess.Popen([sys.executable, __file__, "--serve-handlers", queue, "--address", address,
                             "--handler-slots", str(slots)], env=env, start_new_session=True)


async def serve_handlers(address: str, queue: str, slots: int) -> None:
    client = await Client.connect(address, data_converter=value_converter())
    worker = Worker(client, task_queue=queue, activities=[build_handler_activity(registry(), queue)],
                    max_concurrent_activities=slots)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        await stop.wait()


async def run_all(client: Client, address: str, workloads: list[Workload], args: argparse.Namespace) -> list[Row]:
    queue = "bench-" + uuid.uuid4().hex[:8]
    handler_queue, hand_queue = queue + "-handlers", queue + "-hand"
    local_queue = queue + "-local"
    config = RuntimeConfig(queues={NOOP: handler_queue, SLOW: handler_queue})
    local_config = config.model_copy(update={"local_facets": [NOOP, SLOW]})
    rows = [Row(w) for w in workloads]
    with tempfile.TemporaryDirectory(prefix="ffl-bench-") as tmp:
        store = LocalProgramStore(Path(tmp) / "registry")
        for workload in workloads:
            store.publish(compile_sources([(f"{workload.name}.ffl", workload.source)]))
        # FFL's workers take workflow tasks as an interpreter worker does (worker_slots.py); hand-written, the SDK's
        interpreter = Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                             activities=build_interpreter_activities(store, config), **slot_options())
        local = Worker(client, task_queue=local_queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                       activities=[*build_interpreter_activities(store, local_config),
                                   build_handler_activity(registry(), local_queue)], **slot_options())
        hand = Worker(client, task_queue=hand_queue, workflows=WORKFLOWS, workflow_runner=UnsandboxedWorkflowRunner(),
                      activities=[build_handler_activity(registry(), hand_queue)])
        async with AsyncExitStack() as stack:
            await stack.enter_async_context(interpreter)
            await stack.enter_async_context(local)
            await stack.enter_async_context(hand)
            if args.in_process:
                os.environ[SLEEP_ENV] = str(args.sleep)
                await stack.enter_async_context(Worker(
                    client, task_queue=handler_queue, activities=[build_handler_activity(registry(), handler_queue)],
                    max_concurrent_activities=args.handler_slots))
            else:
                process = spawn_handlers(address, handler_queue, args.handler_slots, args.sleep)
                stack.callback(lambda: (process.terminate(), process.wait(10)))
            await asyncio.sleep(1.0)  # the handler worker polls before the first run
            for repeat in range(args.repeat):
                for row in rows:
                    w = row.workload
                    sides = [("ffl", w.workflow, w.inputs, local_queue if w.local else queue, w.expected),
                             ("hand", w.hand, {**w.hand_args, "queue": handler_queue}, hand_queue,
                              w.hand_expected or w.expected)]
                    for side, workflow, inputs, task_queue, expected in sides if repeat % 2 == 0 else sides[::-1]:
                        figures = await measure(client, workflow, inputs, task_queue, expected, w.facet, args.timeout,
                                                args.keep_histories)
                        (row.ffl if side == "ffl" else row.hand).append(figures)
                        print(f"{w.name} {side}: {figures.wall:.2f} s, {figures.in_flight} in flight, "
                              f"{figures.force_closed} force-closed, slowest task {figures.task_max_ms:.0f} ms"
                              f"{'' if figures.ok else ' — ' + figures.error}", file=sys.stderr, flush=True)
    return rows


def print_table(rows: list[Row], repeat: int) -> None:
    def median(values: list[float]) -> float:
        return statistics.median(values) if values else 0.0

    print(f"median of {repeat} run(s) each; in flight = most handler activities pending at once;"
          " closed = workflow tasks force-closed by the server")
    header = (f"{'workload':<13}{'hand s':>8}{'ffl s':>8}{'ratio':>7}{'target':>8}{'':>5}"
              f"{'hand flight':>12}{'ffl flight':>11}{'hand closed':>12}{'ffl closed':>11}{'ffl task ms':>12}")
    print(header)
    print("-" * len(header))
    for row in rows:
        hand, ffl = median([m.wall for m in row.hand]), median([m.wall for m in row.ffl])
        ratio = ffl / hand if hand else float("nan")
        ok = all(m.ok for m in row.hand + row.ffl)
        verdict = ("ok" if ratio <= row.workload.target else "over") if ok else "FAILED"
        print(f"{row.workload.name:<13}{hand:>8.2f}{ffl:>8.2f}{ratio:>7.2f}{row.workload.target:>8.2f}{verdict:>5}"
              f"{max(m.in_flight for m in row.hand):>12}{max(m.in_flight for m in row.ffl):>11}"
              f"{sum(m.force_closed for m in row.hand):>12}{sum(m.force_closed for m in row.ffl):>11}"
              f"{max(m.task_max_ms for m in row.ffl):>12.0f}")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="chain,local,independent,foreach,slow,slow10k")
    parser.add_argument("--chain", type=int, default=200, help="steps of the chain")
    parser.add_argument("--steps", type=int, default=1000, help="independent steps")
    parser.add_argument("--items", type=int, default=1000, help="foreach items")
    parser.add_argument("--big", type=int, default=10_000, help="items of the foreach that needs child workflows")
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds the slow handler awaits")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side (median reported)")
    parser.add_argument("--in-process", action="store_true", help="serve handlers in this process")
    parser.add_argument("--handler-slots", type=int, default=2000, help="the handler worker's activity slots")
    parser.add_argument("--address", help="an existing Temporal server (default: start a local dev server)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each run")
    parser.add_argument("--keep-histories", type=Path, help="write each run's history JSON into this directory")
    parser.add_argument("--serve-handlers", metavar="QUEUE", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_handlers:
        await serve_handlers(args.address, args.serve_handlers, args.handler_slots)
        return 0
    makers = {"chain": lambda: chain(args.chain), "local": lambda: local_chain(args.chain),
              "independent": lambda: independent(args.steps),
              "slow10k": lambda: fan_out(args.big),
              "foreach": lambda: foreach(args.items, slow_handler=False),
              "slow": lambda: foreach(args.items, slow_handler=True)}
    wanted = [makers[name.strip()]() for name in args.only.split(",") if name.strip()]
    os.environ.setdefault("FFL_VALUE_STORE", tempfile.mkdtemp(prefix="ffl-bench-values-"))  # the handler process too
    with temporal_server(args.address) as address:
        client = await connect(ConnectOptions(address=address), retry_for=30.0, data_converter=value_converter())
        rows = await run_all(client, address, wanted, args)
    print_table(rows, args.repeat)
    return 0 if all(m.ok for row in rows for m in row.ffl + row.hand) else 1


if __name__ == "__main__":
    status = asyncio.run(main())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # temporalio's native threads can crash a finishing interpreter
