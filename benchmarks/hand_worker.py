"""A worker process serving the hand-written workflows (benchmarks/handwritten.py), for side-by-side runs.

    python benchmarks/hand_worker.py --task-queue QUEUE --address HOST:PORT

It runs until SIGTERM, like ``worker.py``; the activities it calls are
served by a ``worker.py --handlers`` process on their own queue.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script: benchmarks/ is not installed
from benchmarks.handwritten import WORKFLOWS  # noqa: E402


async def serve(queue: str, address: str) -> int:
    client = await Client.connect(address)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    async with Worker(client, task_queue=queue, workflows=WORKFLOWS, workflow_runner=UnsandboxedWorkflowRunner()):
        print(f"hand-written workflows on {queue}", flush=True)
        await stop.wait()
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task-queue", required=True)
    parser.add_argument("--address", required=True)
    args = parser.parse_args()
    status = asyncio.run(serve(args.task_queue, args.address))
    sys.stdout.flush()
    os._exit(status)  # temporalio's native threads can crash a finishing interpreter
