"""What ``ffl resume`` costs: a foreach of N failing at 70 % of it, then resumed after the handler is fixed.

Prints, per N: the failed run's time, the resume's time (its recovery query replays the failed run's history
on the worker), the handler calls the resumed run made, the recovery answer's size, and the cost of the call
digest every memo entry now keeps. Figures only, no asserts.

    python benchmarks/resume_bench.py [--sizes 1000 5000] [--children] [--address HOST:PORT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

from temporalio.client import WorkflowFailureError
from temporalio.worker import Worker

from interpreter.activities.dispatch import build_handler_activity, handler_worker_options
from interpreter.activities.handlers import HandlerRegistry
from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore
from interpreter.cli.connect import ConnectOptions, connect
from interpreter.compiler import compile_sources
from interpreter.operations import resume
from interpreter.program.config import RetryConfig, RuntimeConfig
from interpreter.program.constants import RECOVERY_QUERY
from interpreter.workflows import FFLWorkflow, workflow_runner
from interpreter.workflows.memo import call_digest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from servers import temporal_server  # noqa: E402

SOURCE = """namespace pipe {
    event facet Work(i: Long) => (y: Long)
    workflow Run(items: Json) => (ys: Json) andThen {
        all = Work(i = -1) andThen foreach n in $.items {
            w = Work(i = $.n)
            yield Run(ys = [w.y])
        }
    }
}
"""


async def one(client, size: int, children: bool, root: Path) -> None:
    program = compile_sources([("main.ffl", SOURCE)])
    queue = "bench-" + uuid.uuid4().hex[:8]
    store = LocalProgramStore(root / queue)
    store.publish(program)
    bad = int(size * 0.7)
    state = {"broken": True, "calls": 0}

    def work(payload: dict) -> dict:
        if state["broken"] and payload["i"] == bad:
            raise ValueError(f"bad handler at {bad}")
        state["calls"] += 1
        return {"y": payload["i"] * 2}

    registry = HandlerRegistry()
    registry.register("pipe.Work", work)
    config = RuntimeConfig(retry=RetryConfig(maximum_attempts=1), queues={"pipe.Work": queue + "-h"},
                           **({"child_threshold": 500, "iterations_per_child": 500} if children else {}))
    interpreter = Worker(client, task_queue=queue, workflows=[FFLWorkflow], workflow_runner=workflow_runner(),
                         activities=build_interpreter_activities(store, config))
    handlers = Worker(client, task_queue=queue + "-h", activities=[build_handler_activity(registry, queue + "-h")],
                      **handler_worker_options())
    async with interpreter, handlers:
        started = time.monotonic()
        handle = await client.start_workflow("pipe.Run", {"items": list(range(size))}, id=queue, task_queue=queue)
        try:
            await handle.result()
        except WorkflowFailureError:
            pass
        failed = time.monotonic() - started
        before = state["calls"]
        answer = await handle.query(RECOVERY_QUERY)
        size_bytes = len(json.dumps(answer["memo"], default=str))
        state["broken"] = False
        started = time.monotonic()
        again = await resume(client, queue)
        await client.get_workflow_handle(queue, run_id=again.run_id).result()
        resumed = time.monotonic() - started
    print(f"N={size}{' (children of 500)' if children else ''}: failed run {failed:.2f} s ({before} calls); "
          f"resume {resumed:.2f} s, {state['calls'] - before} handler calls; recovery memo {size_bytes / 1024:.0f} KB",
          flush=True)


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--children", action="store_true")
    parser.add_argument("--address")
    args = parser.parse_args(argv)
    args_digest = {"i": 12345, "path": "s3://bucket/key/" + "x" * 40}
    started = time.perf_counter()
    for _ in range(20000):
        call_digest("pipe.Work", args_digest)
    print(f"call digest: {(time.perf_counter() - started) / 20000 * 1e6:.1f} µs a call (small arguments)")
    with temporal_server(args.address) as address, tempfile.TemporaryDirectory() as root:
        client = await connect(ConnectOptions(address=address), retry_for=30)
        for size in args.sizes:
            await one(client, size, args.children, Path(root))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
