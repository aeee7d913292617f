"""FFL coverage: which steps, ``when`` cases, ``catch`` blocks and foreach bodies ran, as ``file:line``.

The places are read from the compiled program (one walk over every
declaration with a body); a run's reports name paths (``b0/who/b0/c1``:
interpreter.py explains them), which ``place_at`` follows through the
program to the node they reached. A facet's body reached through many
steps is one set of places, reached once any of them ran it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from interpreter.program.exprtext import expr_text
from interpreter.program.model import Block, Case, Catch, FacetDecl, Loc, Program, Step

_BLOCK = re.compile(r"b(\d+)$")
_CASE = re.compile(r"c(\d+)$")
_ITERATION = re.compile(r"foreach\[\d+\]$")


@dataclass(frozen=True, order=True)
class Place:
    """A place a test can reach: ``kind`` (step, case, catch, foreach) at ``file:line`` with a short label."""

    file: str
    line: int
    col: int
    kind: str
    label: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.kind} {self.label}"


@dataclass(frozen=True)
class _Iteration:
    """A foreach body, reached through one of its iterations (``foreach[i]``)."""

    block: Block


def _place(kind: str, loc: Loc | None, label: str) -> Place | None:
    return Place(loc.file, loc.line, loc.col, kind, label) if loc is not None and loc.file else None


def places_of(program: Program) -> dict[int, Place]:
    """Every place of the program's own declarations, keyed by the id of its node."""
    found: dict[int, Place] = {}

    def add(node: Any, place: Place | None) -> None:
        if place is not None:
            found[id(node)] = place

    def block(b: Block, owner: str) -> None:
        if b.kind == "foreach":
            add(b, _place("foreach", b.loc, f"foreach {b.var or 'item'} in {owner}"))
        for case in b.cases:
            add(case, _place("case", case.loc, f"case {expr_text(case.condition) if case.condition is not None else '_'} in {owner}"))
            block(case.body, owner)
        for s in b.steps:
            add(s, _place("step", s.loc, f"{s.name} = {s.call.name}"))
            for inner in s.blocks:
                block(inner, owner)
            catch(s.catch, f"{s.name} in {owner}", owner)

    def catch(c: Catch | None, what: str, owner: str) -> None:
        if c is not None:
            add(c, _place("catch", c.loc, f"catch of {what}"))
            block(c.block, owner)

    for decl in program.facets.values():
        if decl.namespace == "ffl":
            continue
        for b in decl.blocks:
            block(b, decl.qname)
        catch(decl.catch, decl.qname, decl.qname)
    return found


def place_at(program: Program, workflow: str, path: str) -> Any:
    """The program node the run's ``path`` reached (a Step, Case, Catch, Block or foreach body), or None."""
    node: Any = program.facets.get(workflow)
    for segment in path.split("/") if path else ():
        node = _child(program, node, segment)
        if node is None:
            return None
    return node


def _child(program: Program, node: Any, segment: str) -> Any:
    if isinstance(node, (Case, Catch)):
        return _child(program, node.body if isinstance(node, Case) else node.block, segment)
    if isinstance(node, _Iteration):
        return next((s for s in node.block.steps if s.name == segment), None)
    if isinstance(node, (FacetDecl, Step)):
        decl = node if isinstance(node, FacetDecl) else program.facets.get(node.call.facet or "")
        own = node if isinstance(node, Step) else None
        blocks = own.blocks if own is not None and own.blocks else (decl.blocks if decl is not None else [])
        if segment == "catch":
            return (own.catch if own is not None else None) or (decl.catch if decl is not None else None)
        found = _BLOCK.match(segment)
        return blocks[int(found.group(1))] if found and int(found.group(1)) < len(blocks) else None
    if isinstance(node, Block):
        if node.kind == "foreach":
            return _Iteration(node) if _ITERATION.match(segment) else None
        if node.kind == "when":
            found = _CASE.match(segment)
            return node.cases[int(found.group(1))] if found and int(found.group(1)) < len(node.cases) else None
        return next((s for s in node.steps if s.name == segment), None)
    return None


@dataclass
class Coverage:
    """The places of one or more programs, and those the tests reached."""

    places: dict[Place, bool] = field(default_factory=dict)
    _programs: dict[int, tuple[Program, dict[int, Place]]] = field(default_factory=dict)

    def add_program(self, program: Program) -> None:
        if id(program) in self._programs:
            return
        found = places_of(program)
        self._programs[id(program)] = (program, found)
        for place in found.values():
            self.places.setdefault(place, False)

    def reached(self, program: Program, workflow: str, paths: Iterable[str]) -> None:
        """A run of ``workflow`` reached ``paths`` (every step and block it started)."""
        self.add_program(program)
        _, found = self._programs[id(program)]
        for path in paths:
            node = place_at(program, workflow, path)
            if isinstance(node, Block):
                continue  # a foreach block started; its body is reached only by an iteration
            if isinstance(node, _Iteration):
                node = node.block
            place = found.get(id(node)) if node is not None else None
            if place is not None:
                self.places[place] = True

    @property
    def missed(self) -> list[Place]:
        return sorted(place for place, hit in self.places.items() if not hit)

    @property
    def percent(self) -> float:
        return 100.0 * sum(self.places.values()) / len(self.places) if self.places else 100.0

    def lines(self) -> Iterator[str]:
        """The text report: one summary line, then every place never reached."""
        hit = sum(self.places.values())
        yield f"FFL coverage: {hit}/{len(self.places)} places ({self.percent:.1f}%)"
        for place in self.missed:
            yield f"  not reached: {place}"

    def as_json(self) -> dict[str, Any]:
        def entry(place: Place) -> dict[str, Any]:
            return {"file": place.file, "line": place.line, "col": place.col, "kind": place.kind,
                    "label": place.label}

        return {"places": len(self.places), "reached": sum(self.places.values()),
                "percent": round(self.percent, 2), "missed": [entry(p) for p in self.missed],
                "all": [{**entry(p), "reached": hit} for p, hit in sorted(self.places.items())]}
