"""Where interpreter workers find compiled programs: the ProgramStore protocol and a directory store.

A program is stored once under its content hash; each workflow it holds
points at the latest program published with it. Runs pin the hash, so
publishing a new version never changes a running workflow.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Protocol

from ..program.model import Block, FacetDecl, Program
from ..program.serialize import content_hash, program_from_json, program_to_json


class ProgramStore(Protocol):
    def publish(self, program: Program) -> str:
        """Store ``program``; return its content hash. Publishing twice is harmless."""
        ...

    def load(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        """(canonical program JSON, hash) for ``workflow``; the latest one when no hash is given.

        Raises LookupError naming what is published when nothing matches.
        """
        ...


def default_registry_root() -> Path:
    """``$FFL_REGISTRY``, else ``~/.ffl/registry``."""
    root = os.environ.get("FFL_REGISTRY")
    return Path(root) if root else Path.home() / ".ffl" / "registry"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class LocalProgramStore:
    """A directory: ``programs/<hash>.json`` and ``workflows/<qname>.json`` → ``{"hash": ...}``."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_registry_root()

    def publish(self, program: Program) -> str:
        text = program_to_json(program)
        digest = content_hash(program)
        target = self.root / "programs" / f"{digest}.json"
        if not target.exists():
            _write_atomic(target, text)
        for name in program.workflows:
            _write_atomic(self.root / "workflows" / f"{name}.json", json.dumps({"hash": digest}))
        return digest

    def published(self) -> list[str]:
        """Qualified names of every published workflow, sorted."""
        folder = self.root / "workflows"
        return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []

    def load(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        if program_hash is None:
            pointer = self.root / "workflows" / f"{workflow}.json"
            if not pointer.is_file():
                known = ", ".join(self.published()) or "nothing"
                raise LookupError(f"no published program holds workflow '{workflow}' in {self.root} "
                                  f"(published: {known})")
            program_hash = json.loads(pointer.read_text(encoding="utf-8"))["hash"]
        path = self.root / "programs" / f"{program_hash}.json"
        if not path.is_file():
            raise LookupError(f"no program with hash {program_hash} in {self.root}")
        text = path.read_text(encoding="utf-8")
        facets = json.loads(text).get("facets", {})
        if facets.get(workflow, {}).get("kind") != "workflow":
            known = ", ".join(sorted(n for n, f in facets.items() if f.get("kind") == "workflow"))
            raise LookupError(f"program {program_hash} has no workflow '{workflow}' (it has: {known or 'none'})")
        return text, program_hash


def trim_program(text: str, workflow: str) -> str:
    """The canonical JSON of only what ``workflow`` can reach: its facets, schemas and implicits.

    Runs pin this in history (the hash stays the published program's), so a
    registry holding many workflows does not weigh on every run's history.
    """
    program = program_from_json(text)
    facets: dict[str, FacetDecl] = {}
    schemas: set[str] = set()
    pending = [workflow]
    while pending:
        name = pending.pop()
        if name in facets:
            continue
        if name in program.schemas:
            schemas.add(name)
            continue
        decl = program.facets.get(name)
        if decl is None:
            continue
        facets[name] = decl
        pending.extend(m.facet for m in decl.mixins if m.facet)
        for implicit in program.implicits.get(name, []):
            pending.extend(m.facet for m in implicit.call.mixins if m.facet)
        blocks = list(decl.blocks) + ([decl.catch.block] if decl.catch else [])
        pending.extend(_called(blocks))
    trimmed = Program(
        format=program.format,
        facets={name: facets[name] for name in sorted(facets)},
        schemas={name: program.schemas[name] for name in sorted(schemas)},
        implicits={name: imps for name, imps in program.implicits.items() if name in facets or name in schemas},
    )
    return program_to_json(trimmed)


def _called(blocks: list[Block]) -> list[str]:
    """Qualified names every call and mixin in ``blocks`` (nested bodies included) refers to."""
    found: list[str] = []
    stack = list(blocks)
    while stack:
        block = stack.pop()
        for step in block.steps:
            if step.call.facet:
                found.append(step.call.facet)
            found.extend(m.facet for m in step.call.mixins if m.facet)
            stack.extend(step.blocks)
            if step.catch is not None:
                stack.append(step.catch.block)
        stack.extend(case.body for case in block.cases)
    return found
