"""The interpreter's own activities as plain functions: program store, scripts, LoadProgram."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from interpreter.activities.interpreter_side import build_interpreter_activities
from interpreter.activities.program_store import LocalProgramStore, default_registry_root, trim_program
from interpreter.activities.scripts import run_script_process
from interpreter.program.config import RuntimeConfig, ScriptConfig
from interpreter.program.constants import (
    LOAD_PROGRAM_ACTIVITY,
    MIRROR_ACTIVITY,
    RECOVER_ACTIVITY,
    RUN_SCRIPT_ACTIVITY,
    TICK_ACTIVITY,
)
from interpreter.program.pinned import pack_lean, strip_locations
from interpreter.program.runinfo import source_files
from interpreter.program.scripts import ScriptRequest
from interpreter.program.serialize import content_hash, program_from_json

from .harness import compile_text

ONE = "namespace a { workflow W() => (v: Long) andThen { yield W(v = 1) } }"
TWO = "namespace a { workflow W() => (v: Long) andThen { yield W(v = 2) }  workflow X() }"
SCRIPTED = """namespace s {
    facet S(p: Long) => (v: Long) andThen script { result["v"] = params["p"] }
    workflow W() => (v: Long) andThen { s = S(p = 1) yield W(v = s.v) }
}"""


def test_store_publish_is_idempotent_and_load_finds_latest(tmp_path):
    store = LocalProgramStore(tmp_path)
    one, two = compile_text(ONE), compile_text(TWO)
    h1 = store.publish(one)
    assert store.publish(one) == h1 == content_hash(one)
    assert len(list((tmp_path / "programs").iterdir())) == 1
    h2 = store.publish(two)
    text, digest = store.load("a.W")
    assert digest == h2 and program_from_json(text) == two
    text, digest = store.load("a.W", h1)
    assert digest == h1 and program_from_json(text) == one
    assert store.published() == ["a.W", "a.X"]


def test_store_lookup_errors_name_only_what_was_asked(tmp_path):
    store = LocalProgramStore(tmp_path)
    h1 = store.publish(compile_text(ONE))
    with pytest.raises(LookupError) as info:
        store.load("a.Missing")
    # neither the published workflows nor the registry's path are shown to whoever can start a workflow
    assert str(info.value) == "no published program holds workflow 'a.Missing'"
    with pytest.raises(LookupError, match="no published program holds workflow '../programs/x'"):
        store.load("../programs/x")
    with pytest.raises(LookupError, match="no program with hash"):
        store.load("a.W", "0" * 64)
    with pytest.raises(LookupError, match="has no workflow 'a.X'"):
        store.load("a.X", h1)


def test_default_registry_root_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("FFL_REGISTRY", str(tmp_path))
    assert default_registry_root() == tmp_path
    monkeypatch.delenv("FFL_REGISTRY")
    assert default_registry_root().parts[-2:] == (".ffl", "registry")


LIMITS = ScriptConfig(timeout_seconds=10)


async def test_run_script_reads_params_and_fills_result():
    assert await run_script_process('result["y"] = params["x"] * 2\nresult["s"] = [1]', {"x": 4}, "script", LIMITS) \
        == {"y": 8, "s": [1]}
    assert await run_script_process("pass", {}, "script", LIMITS) == {}


async def test_run_script_errors_keep_type_and_name_the_step():
    with pytest.raises(ApplicationError) as info:
        await run_script_process("result['a'] = {}['k']", {}, "script of step 'b0/s/script'", LIMITS)
    assert info.value.type == "KeyError" and "b0/s/script" in info.value.message
    assert info.value.non_retryable
    with pytest.raises(ApplicationError) as info:
        await run_script_process("result['a'] = object()", {}, "script", LIMITS)
    assert "not JSON" in info.value.message


async def test_build_interpreter_activities_and_load_program(tmp_path):
    store = LocalProgramStore(tmp_path)
    digest = store.publish(compile_text(ONE))
    config = RuntimeConfig(mirror=True, queues={"a": "q"})
    activities = build_interpreter_activities(store, config)
    names = [a.__temporal_activity_definition.name for a in activities]
    assert names == [LOAD_PROGRAM_ACTIVITY, RUN_SCRIPT_ACTIVITY, TICK_ACTIVITY, RECOVER_ACTIVITY]

    class Sink:
        records: list = []

        def write(self, records):
            self.records.extend(records)

    sink = Sink()
    activities = build_interpreter_activities(store, config, sink, allow_scripts=True)
    assert activities[-1].__temporal_activity_definition.name == MIRROR_ACTIVITY
    env = ActivityEnvironment()
    loaded = await env.run(activities[0], {"workflow": "a.W", "hash": None})
    assert loaded["hash"] == digest and loaded["config"]["queues"] == {"a": "q"}
    assert json.loads(loaded["program"])["facets"]["a.W"]["kind"] == "workflow"
    stored, _ = store.load("a.W")  # pinned from one parse of the stored JSON: what its text trimmed and packed gives
    lean, sources = strip_locations(trim_program(stored, "a.W"))
    assert ({"program": loaded["program"]}, loaded["sources"]) == (pack_lean(lean), sources)
    assert loaded["sources"] == source_files(json.loads(stored)) != []
    with pytest.raises(ApplicationError) as info:
        await env.run(activities[0], {"workflow": "a.Nope"})
    assert info.value.type == "ProgramNotFound" and info.value.non_retryable
    await env.run(activities[-1], [{"kind": "log"}])
    assert sink.records == [{"kind": "log"}]
    scripted = store.publish(compile_text(SCRIPTED))
    request = ScriptRequest(scripted, "s.W", "s.S/b0", {"p": 3}, "b0/s")
    assert await env.run(activities[1], dataclasses.asdict(request)) == {"v": 3}  # as the converter hands it over
    with pytest.raises(ApplicationError) as info:  # what any Temporal client could send: code
        await env.run(activities[1], {"code": "result['v'] = 1", "params": {}})
    assert info.value.type == "InvalidScriptRequest" and info.value.non_retryable and "never code" in info.value.message
    with pytest.raises(ApplicationError) as info:
        await env.run(activities[1], {**dataclasses.asdict(request), "script_id": "s.S/b9"})
    assert info.value.type == "ScriptNotFound"
    assert await env.run(activities[2]) is None  # the tick


async def test_load_program_reads_the_store_once_per_pinned_hash(tmp_path):
    class Counting(LocalProgramStore):
        loads = 0

        def fetch(self, workflow, program_hash=None):
            Counting.loads += 1
            return super().fetch(workflow, program_hash)

    store = Counting(tmp_path)
    digest = store.publish(compile_text(ONE))
    [load, *_] = build_interpreter_activities(store, RuntimeConfig())
    env = ActivityEnvironment()
    first = await env.run(load, {"workflow": "a.W", "hash": None})  # a new run: the store says which is latest
    again = [await env.run(load, {"workflow": "a.W", "hash": digest}) for _ in range(3)]  # its continued runs
    assert Counting.loads == 1 and all(loaded == first for loaded in again)
    assert await env.run(load, {"workflow": "a.W", "hash": None}) == first  # the pointer names the same program
    assert Counting.loads == 1
    moved = store.publish(compile_text(TWO))  # a publish moves the pointer
    assert (await env.run(load, {"workflow": "a.W", "hash": None}))["hash"] == moved and Counting.loads == 2


def test_trim_program_keeps_what_the_workflow_reaches():
    from interpreter.program.serialize import program_to_json
    from tests.conformance_suite import folder

    text = program_to_json(compile_text(TWO))
    assert set(json.loads(trim_program(text, "a.W"))["facets"]) == {"a.W"}
    mixins = compile_text({"m.ffl": (folder("mixins") / "program.ffl").read_text(), "other.ffl": ONE})
    trimmed = program_from_json(trim_program(program_to_json(mixins), "ship.Dispatch"))
    assert set(trimmed.facets) == {"ship.Dispatch", "ship.Send", "ship.Tag", "ship.Retry"}
    assert set(trimmed.schemas) == {"ship.Address"}
    assert set(trimmed.implicits) == {"ship.Tag"}
    assert trim_program(trim_program(program_to_json(mixins), "ship.Dispatch"), "ship.Dispatch") == \
        program_to_json(trimmed)


def _reachable(program, workflow: str) -> tuple[set[str], set[str]]:
    """The facets and schemas ``workflow`` reaches, walked on the model (program.walk): the oracle for
    trim_program, which walks the program's JSON instead."""
    from interpreter.program.walk import steps_of

    facets: set[str] = set()
    schemas: set[str] = set()
    pending = [workflow]
    while pending:
        name = pending.pop()
        if name in program.schemas:
            if name not in schemas:
                schemas.add(name)
                pending.extend(f.type.name for f in program.schemas[name].fields)
            continue
        decl = program.facets.get(name)
        if decl is None or name in facets:
            continue
        facets.add(name)
        pending.extend(p.type.name for p in [*decl.params, *decl.returns])
        pending.extend(m.facet for m in decl.mixins if m.facet)
        for implicit in program.implicits.get(name, []):
            pending.extend(m.facet for m in implicit.call.mixins if m.facet)
        for step in steps_of(decl):
            pending.extend([step.call.facet or "", *(m.facet for m in step.call.mixins if m.facet)])
    return facets, schemas


def test_trim_program_keeps_exactly_what_every_workflow_of_the_suite_reaches_as_canonical_json():
    from interpreter.program.serialize import program_to_json
    from tests.conformance_suite import sources, valid_folders

    trimmed_any = 0
    for path in valid_folders():
        program = compile_text(dict(sources(path)))
        text = program_to_json(program)
        for workflow in program.workflows:
            trimmed = trim_program(text, workflow)
            facets, schemas = _reachable(program, workflow)
            kept = program_from_json(trimmed)
            assert (set(kept.facets), set(kept.schemas)) == (facets, schemas), f"{path.name}: {workflow}"
            assert program_to_json(kept) == trimmed, f"{path.name}: {workflow}: not canonical"
            trimmed_any += trimmed != text
    assert trimmed_any, "some workflow of the suite reaches less than its whole program"


async def test_a_program_not_found_names_the_worker_that_looked(tmp_path):
    activities = build_interpreter_activities(LocalProgramStore(tmp_path), RuntimeConfig(),
                                              identity="interpreter@host/42")
    with pytest.raises(ApplicationError) as info:
        await ActivityEnvironment().run(activities[0], {"workflow": "calc.Double", "hash": "ab" * 32})
    assert info.value.type == "ProgramNotFound"
    assert info.value.message == (f"no program with hash {'ab' * 32} is published "
                                  "(worker interpreter@host/42 looked in its registry)")  # where: in its log only


def test_a_worker_identity_names_its_role():
    from interpreter.cli.worker_main import worker_identity

    assert worker_identity("ffl", True).startswith("interpreter@") and worker_identity("ffl", True).endswith(
        f"/{os.getpid()}")
    assert worker_identity("osm", False).startswith("handlers[osm]@")
