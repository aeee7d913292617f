"""Mirror writer throughput: the records of N runs (a workflow's and a handler worker's) into a local secantusdb.

Each run has a block of S event-facet steps; every step gives the records the
interpreter and the listener send (step running, task pending, task
running, a handler line, task completed, step completed). Prints records/s
and MongoDB requests per collection. Figures only, no asserts; secantusdb
is far slower than a real MongoDB, so this compares versions of the writer,
not deployments.

    python benchmarks/mirror_bench.py [--runs 20] [--steps 20]
"""

from __future__ import annotations

import argparse
import collections
import os
import tempfile
import time

from interpreter.activities.mirror import MirrorWriter
from interpreter.local import start_mongo

T = 1_700_000_000_000


def run_records(runs: int, steps: int) -> list[dict]:
    records: list[dict] = []
    seqs: collections.Counter = collections.Counter()

    def emit(record: dict, workflow: bool = True) -> None:
        if workflow:  # the workflow numbers its records; a handler's have none
            record["seq"] = seqs[record["workflow_id"]]
            seqs[record["workflow_id"]] += 1
        records.append(record)

    for run in range(runs):
        base = {"workflow_id": f"bench-{run}", "run_id": "r"}
        emit({"kind": "runner", **base, "workflow": "b.Main", "state": "created", "program_hash": "h", "time": T})
        emit({"kind": "runner", **base, "workflow": "b.Main", "state": "running", "program_hash": "h",
              "params": {"n": steps}, "time": T})  # fmt: skip
        block = {"kind": "step", **base, "path": "b0", "object_type": "AndThen", "parent_path": None, "block_path": ""}
        emit({**block, "state": "running", "time": T + 1})
        for i in range(steps):
            step = {"kind": "step", **base, "path": f"b0/s{i}", "object_type": "VariableAssignment", "facet": "b.E",
                    "statement_id": f"b.Main/b0/s{i}", "parent_path": None, "block_path": "b0"}  # fmt: skip
            task = {"kind": "task", **base, "activity_id": f"b0/s{i}", "facet": "b.E", "queue": "b", "attempt": 1}
            emit({**step, "state": "running", "time": T + 2})
            emit({**task, "state": "pending", "params": {"i": i}, "time": T + 2})
            emit({**task, "state": "running", "index": 0, "server_id": "srv", "payload": {"i": i}, "time": T + 3}, False)
            emit({"kind": "task_log", **base, "activity_id": f"b0/s{i}", "facet": "b.E", "message": f"step {i}",
                  "attempt": 1, "index": 1, "time": T + 3}, False)  # fmt: skip
            emit({**task, "state": "completed", "index": 2, "server_id": "srv", "returns": {"o": i}, "time": T + 4}, False)
            emit({**step, "state": "completed", "params": {"i": i}, "returns": {"o": i}, "time": T + 5})
        emit({**block, "state": "completed", "time": T + 6})
        emit({"kind": "runner", **base, "workflow": "b.Main", "state": "completed", "program_hash": "h",
              "returns": {"n": steps}, "time": T + 7})  # fmt: skip
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    records = run_records(args.runs, args.steps)
    service = start_mongo()
    try:
        writer = MirrorWriter(service.extra["uri"], "bench", spool_dir=tempfile.mkdtemp(prefix="ffl-bench-spool-"))
        requests: collections.Counter = collections.Counter()
        bulk = writer._bulk

        def counted(by_collection: dict) -> None:
            for collection, batch in by_collection.items():
                requests[collection] += len(batch)
            bulk(by_collection)

        writer._bulk = counted
        started = time.monotonic()
        writer.write(records)
        assert writer.flush(1800), "the writer did not drain"
        seconds = time.monotonic() - started
        writer.close()
        print(f"{len(records)} records of {args.runs} runs x {args.steps} steps in {seconds:.1f} s: "
              f"{len(records) / seconds:.0f} records/s")  # fmt: skip
        print("requests: " + ", ".join(f"{name} {count}" for name, count in sorted(requests.items())))
    finally:
        service.stop()


if __name__ == "__main__":
    main()
    os._exit(0)
