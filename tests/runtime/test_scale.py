"""Scale safety of the interpreter workflow on the real dev server.

Bounds here are correctness margins, not speed targets (benchmarks/runtime_bench.py
measures speed): the SDK fails a workflow activation that runs 2 s, and the
design wants no workflow task doing work proportional to the whole graph.
"""

from __future__ import annotations

import asyncio
import json
import re

from benchmarks.history_figures import most_pending_activities
from benchmarks.runtime_bench import _add, layered, task_durations, task_failures
from interpreter.program import pinned
from interpreter.program.config import RuntimeConfig
from interpreter.program.model import Call, Step
from interpreter.program.serialize import program_to_json
from interpreter.semantics.schedule import dataflow, windowed
from interpreter.workflows.outbox import MIRROR_BATCH_BYTES

from .harness import FAST_RETRY, compile_text, run_ffl


async def test_thousand_step_graph_keeps_every_workflow_task_short(temporal_client, tmp_path):
    case = layered(layers=10, width=100)  # the benchmark's program, at a test's size
    run = await run_ffl(temporal_client, case.source, case.workflow, case.inputs, handlers=case.handlers,
                        tmp_path=tmp_path, timeout=90)
    assert run.error is None, run.message
    assert run.result == case.expected
    history = await run.handle.fetch_history()
    durations = task_durations(history)
    assert task_failures(history) == 0
    assert len(durations) > 10  # the graph advanced over many tasks, not one
    assert max(durations) < 1.0, f"slowest workflow task {max(durations):.2f} s"
    assert len(run.steps) == 1000 and all(s["state"] == "completed" for s in run.steps)


async def test_pending_activities_never_exceed_the_configured_bound(temporal_client, tmp_path):
    source = """namespace scale {
    event facet Add(x: Long, y: Long) => (sum: Long)
    workflow Fan(items: Json) => (sums: Json) andThen foreach n in $.items {
        a = Add(x = $.n, y = 1)
        b = Add(x = a.sum, y = 1)
        yield Fan(sums = [b.sum])
    }
}
"""

    async def slow_add(payload: dict) -> dict:
        await asyncio.sleep(0.05)
        return await _add(payload)

    config = RuntimeConfig(retry=FAST_RETRY, max_pending_activities=3)
    run = await run_ffl(temporal_client, source, "scale.Fan", {"items": list(range(12))},
                        handlers={"scale.Add": slow_add}, tmp_path=tmp_path, config=config, timeout=60)
    assert run.error is None, run.message
    assert run.result == {"sums": [n + 2 for n in range(12)]}  # index order despite throttling
    history = await run.handle.fetch_history()
    assert most_pending_activities(history, {"scale.Add"}) == 3


def _step(name: str, refs: list[str]) -> Step:
    return Step(name=name, call=Call(name="F"), refs=refs)


async def test_dataflow_starts_a_step_only_once_its_block_references_finished():
    steps = [_step("a", []), _step("b", ["a", "outer"]), _step("c", ["a", "b"]), _step("d", [])]
    started: list[str] = []
    gates = {s.name: asyncio.Event() for s in steps}

    async def run(index: int) -> str:
        started.append(steps[index].name)
        await gates[steps[index].name].wait()
        return steps[index].name.upper()

    task = asyncio.create_task(dataflow(steps, run))
    await asyncio.sleep(0.01)
    assert started == ["a", "d"]  # "outer" is not a step of this block: b waits only for a
    gates["d"].set()
    gates["a"].set()
    await asyncio.sleep(0.01)
    assert started == ["a", "d", "b"]
    gates["b"].set()
    gates["c"].set()
    assert await task == ["A", "B", "C", "D"]


async def test_windowed_keeps_at_most_width_in_flight_and_results_in_index_order():
    in_flight = most = 0

    async def run(index: int) -> int:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.001 * (10 - index))  # later indexes finish first
        in_flight -= 1
        return index * 2

    assert await windowed(10, run, width=3) == [i * 2 for i in range(10)]
    assert most == 3
    assert await windowed(0, run) == []


def test_pinned_program_drops_locations_and_compresses_when_large(monkeypatch):
    case = layered(layers=3, width=4)
    program = compile_text(case.source)
    text = program_to_json(program)
    lean, sources = pinned.strip_locations(text)
    small = pinned.pack_lean(lean)
    assert set(small) == {"program"} and '"loc"' not in small["program"] and '"loc"' in text
    assert sources == sorted({m for m in re.findall(r'"file":"([^"]+)"', text)}) != []  # the files the locs named
    monkeypatch.setattr(pinned, "COMPRESS_ABOVE", 100)
    large = pinned.pack_lean(lean)
    assert set(large) == {"program_z"} and len(large["program_z"]) < len(small["program"])
    for packed in (small, large):
        unpacked = pinned.unpack_program(packed)
        assert program_to_json(unpacked) == small["program"]
        graph = case.workflow
        assert unpacked.facets[graph].blocks[0].steps[5].refs == program.facets[graph].blocks[0].steps[5].refs
    assert pinned.unpack_program(dict(small)) is pinned.unpack_program(dict(small))  # parsed once, then cached


def test_locations_cut_from_the_text_are_what_walking_the_parsed_program_drops():
    from interpreter.compiler import compile_sources
    from tests.conformance_suite import sources, valid_folders

    oddly_named = ('na"me\\{x},y.ffl', 'namespace o { event facet E(j: Json) => (j: Json)\n'
                   'workflow W() => (j: Json) andThen { e = E(j = #{"loc": #{"col": 1, "file": "f", "line": 2}})\n'
                   'yield W(j = e.j) } }')
    programs = [compile_sources(sources(path)) for path in valid_folders()] + [compile_sources([oddly_named])]
    for program in programs:  # every construct the suite compiles, and a file name JSON must escape
        text = program_to_json(program)
        files: set[str] = set()
        walked = json.dumps(pinned.without_locations(json.loads(text), files), sort_keys=True,
                            separators=(",", ":"), ensure_ascii=False)
        assert pinned.strip_locations(text) == (walked, sorted(files))
    assert '"key":"loc"' in pinned.strip_locations(text)[0]  # a map literal's key "loc" is the program's, kept


def test_mirror_batches_stop_short_of_the_byte_bound():
    from interpreter.workflows.tracker import Tracker

    tracker = Tracker("wf", "run", "")
    tracker.buffer = [{"n": i, "blob": "x" * 1000} for i in range(10)]
    first = tracker.take(500, max_bytes=3500)
    assert [r["n"] for r in first] == [0, 1, 2]
    assert [r["n"] for r in tracker.take(2)] == [3, 4]
    tracker.buffer[0]["blob"] = "y" * 2_800  # one record near the bound still goes, alone
    assert [r["n"] for r in tracker.take(500, max_bytes=3500)] == [5]
    tracker.buffer[0].update(params={"p": "z" * 10_000}, returns={"r": "z" * 10_000})
    shrunk = tracker.take(1, max_bytes=3500)[0]  # one record over the bound: its bulk is left out
    assert shrunk["n"] == 6 and "too large" in shrunk["params"]["_omitted"] and "_omitted" in shrunk["returns"]
    assert [r["n"] for r in tracker.take(500, max_bytes=1_000_000)] == [7, 8, 9]


async def test_mirrored_run_with_large_returns_keeps_each_mirror_batch_under_the_payload_limit(
        temporal_client, tmp_path):
    # 40 steps each returning ~150 kB: their mirror records (params + returns) add up to ~12 MB,
    # which one 500-record batch could not carry (Temporal refuses payloads over 2 MB).
    source = """namespace scale {
    event facet Big(i: Long) => (blob: String)
    workflow Wide(items: Json) => (done: Json) andThen foreach i in $.items {
        b = Big(i = $.i)
        yield Wide(done = [$.i])
    }
}
"""
    written: list[int] = []
    sizes: list[int] = []

    class Sink:
        def write(self, records: list[dict]) -> None:
            written.append(len(records))
            sizes.append(len(json.dumps(records, default=str)))

    async def big(payload: dict) -> dict:
        return {"blob": str(payload["i"]) * 150_000}

    config = RuntimeConfig(retry=FAST_RETRY, mirror=True)
    run = await run_ffl(temporal_client, source, "scale.Wide", {"items": list(range(1, 41))},
                        handlers={"scale.Big": big}, tmp_path=tmp_path, config=config, mirror=Sink(), timeout=60)
    assert run.error is None, run.message
    assert run.result == {"done": list(range(1, 41))}
    # every record arrives, in batches under the outbox's bound (how many depends on how fast they come)
    assert sum(written) > 80 and max(sizes) <= MIRROR_BATCH_BYTES
    # the steps query stays answerable too: returns past its budget are left out, not the steps
    omitted = [s for s in run.steps if "_omitted" in (s["returns"] or {})]
    assert len(run.steps) == 40 and 0 < len(omitted) < 40


_BIG = """namespace scale {
    event facet Big() => (blob: String)
    event facet Echo(text: String) => (text: String)
    workflow Caught() => (kind: String) andThen {
        b = Big()
        e = Echo(text = b.blob ++ b.blob) catch {
            n = Echo(text = "caught")
        }
        yield Caught(kind = e.error_type)
    }
    workflow Huge() => (one: String, two: String) andThen {
        b = Big()
        yield Huge(one = b.blob, two = b.blob)
    }
}
"""


async def _big(payload: dict) -> dict:
    return {"blob": "x" * 1_200_000}


async def _echo(payload: dict) -> dict:
    return {"text": payload["text"]}


async def test_step_arguments_over_the_value_limit_fail_the_step_instead_of_hanging(temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, max_value_bytes=2_000_000)
    run = await run_ffl(temporal_client, _BIG, "scale.Caught", handlers={"scale.Big": _big, "scale.Echo": _echo},
                        tmp_path=tmp_path, config=config, timeout=30)
    assert run.error is None, run.message
    assert run.result == {"kind": "PayloadTooLarge"}


async def test_workflow_returns_over_the_value_limit_fail_the_run_instead_of_hanging(temporal_client, tmp_path):
    config = RuntimeConfig(retry=FAST_RETRY, max_value_bytes=2_000_000)
    run = await run_ffl(temporal_client, _BIG, "scale.Huge", handlers={"scale.Big": _big, "scale.Echo": _echo},
                        tmp_path=tmp_path, config=config, timeout=30)
    assert run.error is not None and run.error_type == "PayloadTooLarge"
    assert "returns are" in run.message and "at most 2000000 bytes" in run.message
