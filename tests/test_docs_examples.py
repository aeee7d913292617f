"""Every FFL example in the docs is checked: compiled, and run on the dev server when it says how.

An example is a fenced block whose info string starts with ``ffl``; the rest
of the info string holds shell-style ``key=value`` annotations:

- none: the block is a whole program and compiles without diagnostics;
- ``error="words"`` (optionally ``line=N``): compiling fails with a diagnostic
  containing the words (on line N of the block);
- ``run=ns.W input='{...}' output='{...}'``: it compiles, and running ``ns.W``
  with that input on the dev server returns exactly that output;
  ``fails="words"`` instead of ``output`` expects a failure containing the words.

Event facets of runnable examples are answered by the handlers in
``HANDLERS`` below, keyed by qualified name, or by the file a
``handlers=path`` note names (relative to the repository). The README's example must also
be the program in ``examples/calc``. Docs are read during collection
(``pytest_generate_tests``), not when this module is imported; a missing doc
or an example-less one is a failing test.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from interpreter.activities.handlers import load_handlers
from interpreter.compiler import check_sources, compile_sources
from tests.conformance_suite import MissingFixture
from tests.paths import REPO
from tests.runtime.harness import run_ffl

DOCS = (REPO / "docs" / "language.md", REPO / "README.md")
FENCE = re.compile(r"^```(\S*)(.*)$")


@dataclass(frozen=True)
class Example:
    doc: Path
    line: int
    text: str
    notes: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.doc.name}:{self.line}"

    @property
    def runs(self) -> bool:
        return "run" in self.notes


def examples_in(doc: Path) -> list[Example]:
    """The ``ffl`` blocks of ``doc``; a doc that is missing or has none is a missing fixture."""
    if not doc.is_file():
        raise MissingFixture(doc, "no such file")
    found, lines = [], doc.read_text().splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        index += 1
        if not match or not match.group(1):
            if match:  # a fence without a language: skip to its end
                while index < len(lines) and not lines[index].startswith("```"):
                    index += 1
                index += 1
            continue
        start = index
        while index < len(lines) and not lines[index].startswith("```"):
            index += 1
        if match.group(1) == "ffl":
            notes = dict(item.split("=", 1) for item in shlex.split(match.group(2)))
            found.append(Example(doc, start, "\n".join(lines[start:index]) + "\n", notes))
        index += 1
    if not found:
        raise MissingFixture(doc, "no ```ffl examples")
    return found


def all_examples() -> list[Example]:
    return [example for doc in DOCS for example in examples_in(doc)]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    wanted = {"example": lambda e: True, "runnable": lambda e: e.runs}
    for argname, keep in wanted.items():
        if argname in metafunc.fixturenames:
            try:
                values = [e for e in all_examples() if keep(e)]
                ids = [e.id for e in values]
            except MissingFixture as missing:
                values, ids = [missing], ["missing-fixture"]
            metafunc.parametrize(argname, values, ids=ids)


# ----------------------------------------------------------------------------- handlers


def _add(p: dict) -> dict:
    return {"sum": p["x"] + p["y"]}


def _mul(p: dict) -> dict:
    return {"product": p["x"] * p["y"]}


def _divide(p: dict) -> dict:
    return {"quotient": p["x"] / p["y"]}  # ZeroDivisionError for y = 0


PRICES = {"apple": 40, "bread": 250, "cheese": 600}


def _price(p: dict) -> dict:
    if p["item"] not in PRICES:
        raise KeyError(f"no price for {p['item']}")
    return {"cents": PRICES[p["item"]]}


def _upper(p: dict) -> dict:
    return {"text": p["text"].upper()}


def _same(p: dict) -> dict:
    return {"v": p["v"]}


def _echo(p: dict) -> dict:
    """What the handler was given, so examples can show payloads."""
    return {"payload": {k: v for k, v in p.items() if not k.startswith("_")}}


def _split(p: dict) -> dict:
    return {"parts": p["text"].split()}


def _summarize(p: dict) -> dict:
    return {"summary": " ".join(p["text"].split()[:3]) + "..."}


HANDLERS: dict[str, Any] = {
    "calc.Add": _add,
    "calc.Mul": _mul,
    "calc.Divide": _divide,
    "calc.Split": _split,
    "shop.Mul": _mul,
    "demo.Send": _echo,
    "shop.Price": _price,
    "text.Upper": _upper,
    "demo.Echo": _echo,
    "ai.Summarize": _summarize,
    "lex.Id": _same,
    "ops.Echo": _echo,
}


# ----------------------------------------------------------------------------- tests


def test_example_compiles_or_reports_its_error(example: Example):
    found = [str(d) for d in check_sources([("example.ffl", example.text)])]
    want = example.notes.get("error")
    if want is None:
        assert found == [], f"{example.id}: {found}"
        return
    assert not example.runs, f"{example.id}: an example cannot both fail to compile and run"
    line = example.notes.get("line")
    prefix = f"example.ffl:{line}:" if line else "example.ffl:"
    assert any(d.startswith(prefix) and want in d for d in found), f"{example.id}: want {want!r}, got {found}"


async def test_runnable_example_gives_its_output(temporal_client, tmp_path, runnable: Example):
    program = compile_sources([("example.ffl", runnable.text)])
    events = sorted(n for n, d in program.facets.items() if d.kind == "event" or d.prompt is not None)
    if "handlers" in runnable.notes:
        handlers = load_handlers(str(REPO / runnable.notes["handlers"]))
        missing = [n for n in events if n not in handlers]
    else:
        handlers = {n: HANDLERS[n] for n in events if n in HANDLERS}
        missing = [n for n in events if n not in HANDLERS]
    assert not missing, f"{runnable.id}: no handler for {missing}"
    inputs = json.loads(runnable.notes.get("input", "{}"))
    run = await run_ffl(temporal_client, program, runnable.notes["run"], inputs,
                        handlers=handlers, tmp_path=tmp_path, timeout=60)  # fmt: skip
    if "fails" in runnable.notes:
        assert run.error is not None, f"{runnable.id}: expected a failure, got {run.result}"
        assert runnable.notes["fails"] in run.message, f"{runnable.id}: {run.message}"
    else:
        assert run.error is None, f"{runnable.id}: {run.message}"
        assert run.result == json.loads(runnable.notes["output"]), runnable.id


def reserved_words() -> set[str]:
    """The grammar's keywords: terminals spelled as one lowercase word."""
    grammar = (REPO / "interpreter" / "compiler" / "grammar.lark").read_text()
    return set(re.findall(r'^[A-Z]+: "([a-zA-Z]+)"$', grammar, re.M))


def test_every_reserved_word_appears_in_a_language_example():
    """The reference shows every keyword of the language at work in at least one compiled example."""
    reserved = reserved_words()
    assert len(reserved) > 20
    words: set[str] = set()
    for example in examples_in(DOCS[0]):
        if "error" not in example.notes:
            words |= set(re.findall(r"[A-Za-z_]+", example.text))
    assert sorted(reserved - words) == []


def test_reserved_words_listed_are_the_grammars():
    lines = [line for line in DOCS[0].read_text().splitlines() if line.startswith("- Reserved words")]
    assert len(lines) == 1, "docs/language.md lists the reserved words on one line starting '- Reserved words'"
    assert set(re.findall(r"`([a-zA-Z]+)`", lines[0])) == reserved_words()


def test_most_language_examples_run():
    examples = examples_in(DOCS[0])
    assert sum(e.runs for e in examples) * 2 >= len(examples), "run at least half of the examples"


def test_readme_example_is_the_example_program():
    """The README shows examples/calc as it is: its program and its handlers, run with those handlers."""
    (example,) = [e for e in examples_in(DOCS[1]) if e.runs]
    assert example.text == (REPO / "examples" / "calc" / "calc.ffl").read_text()
    assert example.notes.get("handlers") == "examples/calc/handlers.py"
    assert f"```python\n{(REPO / example.notes['handlers']).read_text()}```" in DOCS[1].read_text()
