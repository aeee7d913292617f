"""Shape of the compiled Program: resolved names, ids, reads, sees, implicits, determinism."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from interpreter.compiler import CompileError, check_files, compile_files, compile_sources
from interpreter.program.serialize import content_hash, program_from_json, program_to_json

LIB = textwrap.dedent("""
    namespace osm.cache {
        /** Downloads a region. */
        event facet Download(region: String, retries: Long = 1) => (path: String, size: Long)
        schema Region { name: String, bbox: [Double] }
    }
""")

MAIN = textwrap.dedent("""
    namespace osm.app {
        uses osm.cache
        facet Retry(attempts: Long = 3)
        facet Tag(label: String)
        implicit first = Tag(label = "a")
        implicit second = Tag(label = "b")
        event facet Count(path: String, region: Region) => (n: Long, regions: [Region])

        workflow Import(name: String, regions: Json) => (total: Long, paths: Json) andThen {
            r = Region(name = $.name, bbox = [1.0])
            d = Download(region = r.name ++ $.name, retries = 2) with Retry(attempts = $.name ++ r.name) as retry
            c = Count(path = d.path, region = r) andThen {
                again = osm.cache.Download(region = $.name)
                yield Count(n = again.size)
            } catch when {
                case c.error_type == "ValueError" => { yield Count(n = 0) }
                case _ => { e = Download(region = c.error) }
            }
            yield Import(total = c.n + d.size, paths = [d.path])
        } andThen foreach item in $.regions {
            each = Download(region = $.item.name)
            yield Import(paths = [each.path])
        } andThen when {
            case c2.n > 1 => { big = Download(region = "big") }
            case _ => { }
        } andThen {
            c2 = Count(path = "p", region = $.name)
        }
    }
""")

TOP = "event facet Ping(x: Long) => (y: Long)\nworkflow Top() andThen {\n  p = Ping(x = 1)\n}\n"


def sources():
    return [("lib.ffl", LIB), ("main.ffl", MAIN), ("top.ffl", TOP)]


@pytest.fixture(scope="module")
def program():
    # the when block refers to c2 of a block written after it: fix the source to be valid
    text = MAIN.replace("case c2.n > 1", "case c.n > 1")
    return compile_sources([("lib.ffl", LIB), ("main.ffl", text), ("top.ffl", TOP)])


def test_declarations_get_qualified_names_namespaces_and_queues(program):
    download = program.facets["osm.cache.Download"]
    assert (download.qname, download.namespace, download.queue, download.kind) == (
        "osm.cache.Download", "osm.cache", "osm", "event")
    assert download.doc == "Downloads a region."
    top = program.facets["Ping"]
    assert (top.qname, top.namespace, top.queue) == ("Ping", "", "default")
    assert program.schemas["osm.cache.Region"].namespace == "osm.cache"
    assert program.workflows == ["Top", "osm.app.Import"]


def test_calls_mixins_yields_and_types_are_resolved(program):
    wf = program.facets["osm.app.Import"]
    r, d, c = wf.blocks[0].steps
    assert (r.call.facet, r.call.kind, r.call.queue) == ("osm.cache.Region", "schema", None)
    assert (d.call.facet, d.call.kind, d.call.queue) == ("osm.cache.Download", "event", "osm")
    assert d.call.mixins[0].facet == "osm.app.Retry"
    assert c.blocks[0].steps[0].call.facet == "osm.cache.Download"
    assert c.blocks[0].yields[0].target == "osm.app.Count"
    assert wf.blocks[0].yields[0].target == "osm.app.Import"
    count = program.facets["osm.app.Count"]
    assert count.params[1].type.name == "osm.cache.Region"
    assert (count.returns[1].type.name, count.returns[1].type.depth) == ("osm.cache.Region", 1)
    assert program.facets["Top"].blocks[0].steps[0].call.queue == "default"


def test_step_ids_follow_block_step_case_and_catch_positions(program):
    wf = program.facets["osm.app.Import"]
    r, d, c = wf.blocks[0].steps
    assert [r.id, d.id, c.id] == ["osm.app.Import/b0/s0", "osm.app.Import/b0/s1", "osm.app.Import/b0/s2"]
    assert c.blocks[0].steps[0].id == "osm.app.Import/b0/s2/b0/s0"
    assert c.catch.block.cases[1].body.steps[0].id == "osm.app.Import/b0/s2/catch/c1/s0"
    assert wf.blocks[1].steps[0].id == "osm.app.Import/b1/s0"
    assert wf.blocks[2].cases[0].body.steps[0].id == "osm.app.Import/b2/c0/s0"
    ids = []

    def collect(blocks):
        for block in blocks:
            for step in block.steps:
                ids.append(step.id)
                collect(step.blocks)
                if step.catch:
                    collect([step.catch.block])
            collect([case.body for case in block.cases])

    for decl in program.facets.values():
        collect(decl.blocks)
    assert len(ids) == len(set(ids))


def test_refs_and_params_in_first_use_order_without_duplicates(program):
    wf = program.facets["osm.app.Import"]
    r, d, c = wf.blocks[0].steps
    assert (r.refs, r.params) == ([], ["name"])
    assert (d.refs, d.params) == (["r"], ["name"])  # mixin args count too
    assert (c.refs, c.params) == (["d", "r"], [])
    total = wf.blocks[0].yields[0]
    assert (total.refs, total.params) == (["c", "d"], [])
    assert (c.blocks[0].yields[0].refs, c.blocks[0].steps[0].params) == (["again"], ["name"])
    assert c.catch.block.cases[0].refs == ["c"]
    assert c.catch.block.cases[1].body.steps[0].refs == ["c"]
    each = wf.blocks[1]
    assert (each.items_refs, each.items_params) == ([], ["regions"])
    assert each.steps[0].params == ["item"]


def test_when_block_sees_the_earlier_blocks_it_reads(program):
    wf = program.facets["osm.app.Import"]
    assert [b.sees for b in wf.blocks] == [[], [], [0], []]
    assert wf.blocks[2].cases[0].refs == ["c"]


def test_when_block_may_not_read_a_later_block():
    with pytest.raises(CompileError) as err:
        compile_sources(sources())
    assert any("c2" in d.message and d.file == "main.ffl" for d in err.value.diagnostics)


def test_implicits_grouped_by_facet_in_source_order(program):
    assert list(program.implicits) == ["osm.app.Tag"]
    assert [i.name for i in program.implicits["osm.app.Tag"]] == ["first", "second"]
    assert program.implicits["osm.app.Tag"][0].qname == "osm.app.first"
    assert program.implicits["osm.app.Tag"][0].call.facet == "osm.app.Tag"


def test_compiling_twice_or_in_another_file_order_gives_identical_json():
    text = MAIN.replace("case c2.n > 1", "case c.n > 1")
    files = [("lib.ffl", LIB), ("main.ffl", text), ("top.ffl", TOP)]
    first = compile_sources(files)
    again = compile_sources(list(reversed(files)))
    assert program_to_json(first) == program_to_json(again)
    assert content_hash(first) == content_hash(again)
    changed = compile_sources([("lib.ffl", LIB), ("main.ffl", text.replace('"a"', '"z"')), ("top.ffl", TOP)])
    assert content_hash(changed) != content_hash(first)
    assert program_to_json(program_from_json(program_to_json(first))) == program_to_json(first)


def test_compile_error_carries_every_diagnostic_sorted():
    with pytest.raises(CompileError) as err:
        compile_sources([("a.ffl", "workflow W() andThen {\n  s = X()\n  t = Y()\n}\n")])
    assert [(d.line, d.message) for d in err.value.diagnostics] == [
        (2, "unknown facet 'X'"), (3, "unknown facet 'Y'")]


def test_files_and_directories(tmp_path: Path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "b.ffl").write_text(LIB)
    (tmp_path / "sub" / "a.ffl").write_text(TOP)
    (tmp_path / "notes.txt").write_text("not ffl")
    program = compile_files([str(tmp_path)])
    assert set(program.facets) == {"osm.cache.Download", "Ping", "Top"}
    assert check_files([str(tmp_path / "b.ffl"), str(tmp_path / "sub")]) == []


def test_unreadable_file_is_a_diagnostic(tmp_path: Path):
    missing = str(tmp_path / "missing.ffl")
    binary = tmp_path / "bin.ffl"
    binary.write_bytes(b"\xff\xfe\x00bad")
    found = check_files([missing, str(binary)])
    assert [d.file for d in found] == [str(binary), missing]
    assert "cannot read" in found[0].message and "cannot read" in found[1].message
    with pytest.raises(CompileError):
        compile_files([missing])


def test_step_level_when_tail_sees_earlier_tail_blocks():
    program = compile_sources([("s.ffl", textwrap.dedent("""
        event facet E(x: Long) => (y: Long)
        workflow W() andThen {
            a = E(x = 1) andThen {
                b = E(x = a.y)
            } andThen {
                c = E(x = 2)
            } andThen when {
                case c.y > b.y => { d = E(x = 1) }
                case _ => { }
            }
        }
    """))])
    tail = program.facets["W"].blocks[0].steps[0].blocks
    assert [block.sees for block in tail] == [[], [], [0, 1]]
    assert tail[2].cases[0].refs == ["c", "b"]
