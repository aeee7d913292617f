"""An edit re-checks only what it can affect, and the diagnostics stay exactly those of ``ffl check``.

In-process (no server): after each edit, every file's diagnostics must equal
those ``check_sources`` gives for the whole program as it now is.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from interpreter.compiler import check_sources
from interpreter.lsp.program import ProgramState

LIB = """\
namespace lib {
    event facet Fetch(key: String, limit: Long = 10) => (items: Json)
    schema Item { name: String }
    facet Twice(n: Long) => (v: Long) andThen {
        a = Double(n = $.n)
        yield Twice(v = a.v)
    }
    facet Double(n: Long) => (v: Long)
}
"""
APP = """\
namespace app {
    use lib
    use other
    workflow Main(key: String) => (n: Json) andThen {
        f = Fetch(key = $.key)
        t = Twice(n = 2)
        i = Item(name = "x")
        yield Main(n = f.items)
    }
}
"""
OTHER = """\
namespace other {
    event facet Ping() => (ok: Boolean)
}
"""

EDITS = {
    "a parameter renamed in the library breaks its caller": ("lib.ffl", LIB.replace("key: String", "name: String")),
    "a facet removed from the library": ("lib.ffl", LIB.replace("    schema Item { name: String }\n", "")),
    "a syntax error in the library hides its declarations": ("lib.ffl", LIB.replace("=> (items", "=> items")),
    "a duplicate declaration in another file": ("other.ffl", OTHER.replace("other", "lib").replace("Ping", "Fetch")),
    "a use removed": ("app.ffl", APP.replace("    use lib\n", "")),
    "a call that closes a cycle through another file": ("lib.ffl", LIB.replace(
        "facet Double(n: Long) => (v: Long)", "facet Double(n: Long) => (v: Long) andThen {\n        b = Twice(n = 1)\n    }")),
    "a misspelt call in a body": ("app.ffl", APP.replace("Twice(n = 2)", "Twise(n = 2)")),
    "a namespace removed that a use names": ("other.ffl", OTHER.replace("other", "gone")),
}


def expected(sources: dict[str, str]) -> dict[str, list[str]]:
    found = {path: [] for path in sources}
    for diagnostic in check_sources(list(sources.items())):
        found[diagnostic.file].append(str(diagnostic))
    return found


def actual(program: ProgramState) -> dict[str, list[str]]:
    return {path: [str(d) for d in state.diagnostics] for path, state in program.files.items()}


@pytest.mark.parametrize("name", list(EDITS))
def test_after_an_edit_and_its_undo_every_file_has_the_diagnostics_of_a_full_check(name: str):
    sources = {"lib.ffl": LIB, "app.ffl": APP, "other.ffl": OTHER}
    program = ProgramState()
    program.load(sources)
    path, text = EDITS[name]
    program.update(path, text)
    after = {**sources, path: text}
    assert actual(program) == expected(after)
    assert any(actual(program).values())
    program.update(path, sources[path])
    assert actual(program) == expected(sources) == {p: [] for p in sources}


def test_an_edit_inside_a_body_checks_only_that_file():
    program = ProgramState()
    program.load({"lib.ffl": LIB, "app.ffl": APP, "other.ffl": OTHER})
    assert program.update("app.ffl", APP.replace("Twice(n = 2)", "Twice(n = 3)")) == {"app.ffl"}


def test_a_changed_signature_checks_the_files_that_write_its_name():
    program = ProgramState()
    program.load({"lib.ffl": LIB, "app.ffl": APP, "other.ffl": OTHER})
    assert program.update("lib.ffl", LIB.replace("limit: Long = 10", "limit: Long = 20")) == {"lib.ffl", "app.ffl"}


def test_a_new_file_and_a_removed_file_are_checked_with_the_rest():
    sources = {"lib.ffl": LIB, "app.ffl": APP}
    program = ProgramState()
    program.load(sources)
    duplicate = OTHER.replace("other", "lib").replace("Ping", "Fetch")
    program.update("other.ffl", duplicate)
    assert actual(program) == expected({**sources, "other.ffl": duplicate})
    assert program.remove("other.ffl") == {"other.ffl", "lib.ffl", "app.ffl"}
    assert actual(program) == expected(sources)


def test_a_line_added_above_declarations_checks_only_the_edited_file():
    program = ProgramState()
    program.load({"lib.ffl": LIB, "app.ffl": APP, "other.ffl": OTHER})
    assert program.update("lib.ffl", "\n" + LIB) == {"lib.ffl"}


def test_a_moved_declaration_updates_the_duplicate_that_cites_its_line():
    duplicate = OTHER.replace("other", "lib").replace("Ping", "Fetch")
    sources = {"lib.ffl": LIB, "app.ffl": APP, "other.ffl": duplicate}
    program = ProgramState()
    program.load(sources)
    assert "first declared at lib.ffl:2:17" in actual(program)["other.ffl"][0]
    program.update("lib.ffl", "\n" + LIB)
    assert actual(program) == expected({**sources, "lib.ffl": "\n" + LIB})
    assert "first declared at lib.ffl:3:17" in actual(program)["other.ffl"][0]


PROGRAMS = Path(__file__).parents[1] / "conformance" / "valid"


@pytest.mark.parametrize("folder", ["multifile", "osm_pipeline", "shop_checkout"])
def test_random_one_character_edits_keep_every_file_as_a_full_check_reports_it(folder: str):
    sources = {str(p): p.read_text() for p in sorted((PROGRAMS / folder).glob("*.ffl"))}
    program = ProgramState()
    program.load(dict(sources))
    chance = random.Random(folder)
    for _ in range(30):
        path = chance.choice(sorted(sources))
        text = sources[path]
        at = chance.randrange(len(text))
        sources[path] = text[:at] + text[at + 1:] if chance.random() < 0.5 else \
            text[:at] + chance.choice("aX_.=(){}\n 1\"") + text[at:]
        program.update(path, sources[path])
        assert actual(program) == expected(sources)
