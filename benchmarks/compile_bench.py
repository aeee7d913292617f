"""Parse (and compile) a generated FFL program at 1x, 2x and 4x ~5,000 lines.

Prints lines/second per size: a rate that falls as the size grows would show
super-linear behaviour in the parser or compiler. Figures only, no asserts.

    python benchmarks/compile_bench.py [--lines 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from interpreter.compiler.parser import parse_source

try:  # the compiler is optional: parse-only figures are still useful
    from interpreter.compiler import compile_sources
except ImportError:  # pragma: no cover - depends on what is installed
    compile_sources = None

_HEADER = '''\
/** Namespace {i}: event facets, a schema, a composed facet. */
namespace bench.n{i} {{
    uses bench.common
    /** Adds two numbers. */
    event facet Add(x: Long, y: Long) => (sum: Long)
    event facet Fetch(key: String) => (items: Json, count: Long)
    schema Rec {{ name: String, size: Long, tags: [String] }}
    implicit addDefaults = Add(y = 1)
    facet Twice(n: Long) => (value: Long) script python {{
        if params["n"] > 0:
            result["half"] = {{"n": params["n"] // 2}}
    }} andThen {{
        a = Add(x = $.n, y = $.n)
        yield Twice(value = a.sum)
    }}
'''

_WORKFLOW = """\
    /** Workflow {j} of namespace {i}. */
    workflow W{j}(a: Long, b: Long = {j}, keys: Json = ["k1", "k2"]) => (total: Long, names: Json, label: String) andThen {{
        s1 = Add(x = $.a, y = $.b * 2 + 1)
        s2 = Add(x = s1.sum, y = ($.a - 3) % 7) with Tag(label = "w{j}") as tag
        d = Twice(n = s2.sum)
        r = Rec(name = "r" ++ d.value, size = d.value, tags = ["a", "b"])
        c = Log(message = "total=" ++ (s2.sum + d.value))
        yield W{j}(total = s2.sum + d.value * 1, label = r.name)
    }} andThen foreach k in $.keys {{
        f = Fetch(key = $.k ++ "-x") catch {{
            e = Log(message = f.error)
        }}
        yield W{j}(names = [#{{"key": $.k, "n": f.count}}])
    }} andThen when {{
        case $.a > 10 && !($.b == 0) || $.a <= -1 => {{
            big = Add(x = $.a, y = 1)
        }}
        case _ => {{
            small = Add(x = 0, y = $.b)
        }}
    }}
"""

_COMMON = """\
namespace bench.common {
    event facet Log(message: String) => (ok: Boolean)
    facet Tag(label: String = "none")
}
"""


def generate(target_lines: int, workflows_per_namespace: int = 5) -> str:
    """An FFL program of at least ``target_lines`` lines."""
    parts = [_COMMON]
    lines, i = _COMMON.count("\n"), 0
    while lines < target_lines:
        block = _HEADER.format(i=i)
        block += "".join(_WORKFLOW.format(i=i, j=j) for j in range(workflows_per_namespace)) + "}\n"
        parts.append(block)
        lines += block.count("\n")
        i += 1
    return "".join(parts)


def best_of(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=5000, help="lines of the 1x program")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best is shown)")
    args = parser.parse_args()

    parse_source("facet Warmup()")  # builds the cached LALR parser outside the timings
    print(f"{'size':>4} {'lines':>7} {'parse s':>8} {'parse lines/s':>14} {'compile s':>10} {'compile lines/s':>16}")
    for factor in (1, 2, 4):
        text = generate(args.lines * factor)
        lines = text.count("\n")
        parse_s = best_of(args.repeat, lambda text=text: parse_source(text, "bench.ffl"))
        row = f"{factor:>3}x {lines:>7} {parse_s:>8.3f} {lines / parse_s:>14,.0f}"
        if compile_sources is not None:
            try:
                compile_s = best_of(args.repeat, lambda text=text: compile_sources([("bench.ffl", text)]))
                row += f" {compile_s:>10.3f} {lines / compile_s:>16,.0f}"
            except Exception as exc:  # report, keep the parse figures
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                row += f"   compile failed: {first}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
