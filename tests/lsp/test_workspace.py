"""Which files make a program, and files that change on disk while no editor holds them."""

from __future__ import annotations

from pathlib import Path

from interpreter.lsp.workspace import Workspace

FACET = "namespace {ns} {{ event facet {name}() => (ok: Boolean) }}\n"


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_sibling_folders_without_ffl_above_them_are_separate_programs(tmp_path: Path):
    calc = write(tmp_path / "examples" / "calc" / "calc.ffl", FACET.format(ns="calc", name="Add"))
    hello = write(tmp_path / "examples" / "hello" / "hello.ffl", FACET.format(ns="calc", name="Add"))
    workspace = Workspace([str(tmp_path)])
    assert workspace.root_of(calc) == tmp_path / "examples" / "calc"
    assert workspace.opened(calc, Path(calc).read_text()) == {calc: []}  # the same name in hello is no duplicate
    assert workspace.opened(hello, Path(hello).read_text()) == {hello: []}


def test_a_subfolder_joins_the_program_of_the_folder_above_it_that_holds_ffl(tmp_path: Path):
    top = write(tmp_path / "osm" / "osm.ffl", FACET.format(ns="osm", name="Import"))
    cache = write(tmp_path / "osm" / "cache" / "cache.ffl", FACET.format(ns="osm", name="Import"))
    workspace = Workspace([str(tmp_path)])
    assert workspace.root_of(cache) == tmp_path / "osm"
    found = workspace.opened(top, Path(top).read_text())
    assert found[cache] == []  # files are compiled in path order: the second declaration is the duplicate
    assert [d.message.split(" (")[0] for d in found[top]] == ["duplicate declaration 'osm.Import'"]


def test_closing_an_edited_file_goes_back_to_the_disk_and_a_deleted_file_leaves_the_program(tmp_path: Path):
    lib = write(tmp_path / "p" / "lib.ffl", FACET.format(ns="lib", name="Ping"))
    app = write(tmp_path / "p" / "app.ffl", "namespace app { use lib\n workflow W() andThen { p = Ping() } }\n")
    workspace = Workspace([str(tmp_path)])
    workspace.opened(app, Path(app).read_text())
    workspace.opened(lib, Path(lib).read_text())
    assert workspace.changed(lib, FACET.format(ns="lib", name="Pong"))[app] != []
    assert workspace.closed(lib)[app] == []
    Path(lib).unlink()
    found = workspace.closed(lib)
    assert found[lib] == [] and [d.message for d in found[app]] == [
        "uses unknown namespace 'lib'", "unknown facet 'Ping'"]
