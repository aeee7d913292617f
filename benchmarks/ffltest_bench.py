"""How fast ``ffl test`` runs: 100 tests of a 20-step program with one-hour timers and a signal wait.

The program chains 17 event-facet steps, two one-hour ``ffl.Sleep`` timers
and an ``ffl.WaitForSignal`` with a one-hour timeout (20 steps); half the tests approve
by signal, half let the wait time out. Every test runs in memory with mocked
facets and virtual time, and its outputs are checked. Prints the figures;
no asserts on time.

    python benchmarks/ffltest_bench.py [--tests 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time

from interpreter.compiler import compile_sources
from interpreter.testing import Tester, signal

STEPS = 17


def program() -> str:
    chain = ["        s0 = Inc(n = $.start)"]
    chain += [f"        s{i} = Inc(n = s{i - 1}.n)" for i in range(1, STEPS // 2)]
    chain.append(f"        nap = ffl.Sleep(seconds = 3600 + 0 * s{STEPS // 2 - 1}.n)")
    chain.append(f"        ok = ffl.WaitForSignal(name = \"approve\", timeout_seconds = 3600 + 0 * s{STEPS // 2 - 1}.n)")
    chain.append(f"        s{STEPS // 2} = Inc(n = s{STEPS // 2 - 1}.n, after = ok.timed_out)")
    chain += [f"        s{i} = Inc(n = s{i - 1}.n)" for i in range(STEPS // 2 + 1, STEPS)]
    chain.append(f"        rest = ffl.Sleep(seconds = 3600 + 0 * s{STEPS - 1}.n)")
    body = "\n".join(chain)
    return f"""namespace bench {{
    event facet Inc(n: Long, after: Json = null) => (n: Long)

    workflow Chain(start: Long) => (n: Long, approved: Boolean) andThen {{
{body}
        yield Chain(n = s{STEPS - 1}.n, approved = !ok.timed_out)
    }}
}}
"""


async def run(tests: int) -> tuple[float, Tester]:
    tester = Tester(compile_sources([("bench.ffl", program())]))
    started = time.perf_counter()
    for index in range(tests):
        approve = index % 2 == 0
        result = await tester.arun("bench.Chain", {"start": index}, mocks={"bench.Inc": lambda a: {"n": a["n"] + 1}},
                                   signals=[signal("approve", {"yes": True}, at=1800)] if approve else [])
        expected = {"n": index + STEPS, "approved": approve}
        if result.outputs != expected or len(result.calls) != STEPS:
            raise SystemExit(f"test {index}: expected {expected}, got {result.outputs} ({result.failure})")
    return time.perf_counter() - started, tester


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tests", type=int, default=100)
    args = parser.parse_args()
    seconds, tester = asyncio.run(run(args.tests))
    steps = len(tester.program.facets["bench.Chain"].blocks[0].steps)
    print(f"{args.tests} tests of a {steps}-step program (two 1-hour timers, a 1-hour signal wait): "
          f"{seconds:.2f} s in-process, {1000 * seconds / args.tests:.1f} ms per test")
    print(next(tester.coverage.lines()))
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    os._exit(status)
