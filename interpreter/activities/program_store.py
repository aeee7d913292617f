"""Where interpreter workers find compiled programs: the ProgramStore protocol and a directory store.

A program is stored once under its content hash; each workflow it holds
points at the latest program published with it. Runs pin the hash, so
publishing a new version never changes a running workflow.

Stored programs are tamper-evident: a program's canonical JSON hashes to the
hash it is stored under, so loading checks that and refuses a copy edited
since (``ProgramTampered``); publishing the program again repairs it.
Publishing a workflow that already points at a different program replaces
that pointer only when asked (``replace``); pointers record who published
them and when. Lookup errors name only the workflow or hash asked for.
"""

from __future__ import annotations

import datetime
import getpass
import hashlib
import json
import os
import re
import socket
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..program.gcpause import collector_paused
from ..program.model import Program
from ..program.serialize import canonical_json, content_hash, program_data, program_to_json
from .private_files import private_dir


class ProgramTampered(Exception):
    """A stored program whose content no longer hashes to the hash it is stored and pinned under."""


class PublishConflict(Exception):
    """Workflows of the program already point at other programs, and replacing was not asked for."""

    def __init__(self, digest: str, conflicts: dict[str, str]):
        self.digest, self.conflicts = digest, dict(conflicts)
        named = ", ".join(f"'{name}' (program {old})" for name, old in sorted(conflicts.items()))
        super().__init__(f"already published with another program: {named}; publish with --replace to point "
                         f"{'it' if len(conflicts) == 1 else 'them'} at program {digest}")


@dataclass(frozen=True)
class Published:
    """What a publish did: the hash, the pointers it moved (workflow → previous hash), whether it repaired."""

    hash: str
    replaced: dict[str, str] = field(default_factory=dict)
    repaired: bool = False


class ProgramStore(Protocol):
    def publish(self, program: Program) -> str:
        """Store ``program``; return its content hash. Publishing twice is harmless."""
        ...

    def current(self, workflow: str) -> str | None:
        """The hash ``workflow`` points at (the latest published), or None."""
        ...

    def load(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        """(canonical program JSON, hash) for ``workflow``; the latest one when no hash is given.

        Raises LookupError naming the workflow (or hash) when nothing matches,
        ProgramTampered when the stored copy does not hash to its hash.
        """
        ...

    def fetch(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        """``load`` without parsing the program to check it holds ``workflow`` (``require_workflow``):
        for a caller that parses it anyway, since parsing a 50,000-step program takes half a second."""
        ...


_QNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_HASH = re.compile(r"[0-9a-f]{64}")


def checked_names(workflow: str, program_hash: str | None) -> None:
    """LookupError for a workflow name or hash that could not be published (and must not become a path)."""
    if not _QNAME.fullmatch(workflow):
        raise LookupError(f"no published program holds workflow {workflow!r}")
    if program_hash is not None and not _HASH.fullmatch(program_hash):
        raise LookupError(f"no program with hash {program_hash!r} is published")


def default_registry_root() -> Path:
    """``$FFL_REGISTRY``, else ``~/.ffl/registry``."""
    root = os.environ.get("FFL_REGISTRY")
    return Path(root) if root else Path.home() / ".ffl" / "registry"


def default_publisher() -> str:
    """Who publishes: ``$FFL_PUBLISHER``, else ``user@host``."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a container)
        user = str(os.getuid())
    return os.environ.get("FFL_PUBLISHER") or f"{user}@{socket.gethostname()}"


def text_hash(text: str) -> str:
    """The content hash of canonical program JSON (what ``content_hash`` gives for the program it encodes)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verified(text: str, program_hash: str) -> str:
    """``text`` if it hashes to ``program_hash``; ProgramTampered otherwise."""
    if text_hash(text) != program_hash:
        raise ProgramTampered(f"stored program {program_hash} has been altered since it was published (its "
                              "content no longer has that hash); publish the program again to repair it")
    return text


def check_workflow(text: str, workflow: str, program_hash: str) -> None:
    """LookupError unless the program ``text`` holds workflow ``workflow``."""
    with collector_paused():  # a large program's millions of nodes (program/gcpause.py)
        require_workflow(json.loads(text), workflow, program_hash)


def require_workflow(data: dict, workflow: str, program_hash: str) -> None:
    """LookupError unless the program's parsed JSON ``data`` holds workflow ``workflow``."""
    if data.get("facets", {}).get(workflow, {}).get("kind") != "workflow":
        raise LookupError(f"program {program_hash} has no workflow '{workflow}'")


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` at once (readers never see half a file), owner-only like its folder."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class LocalProgramStore:
    """A directory: ``programs/<hash>.json`` and ``workflows/<qname>.json`` → ``{"hash", "publisher", "published"}``."""

    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_registry_root()

    def _pointer(self, workflow: str) -> Path:
        return self.root / "workflows" / f"{workflow}.json"

    def current(self, workflow: str) -> str | None:
        """The hash ``workflow`` points at, or None."""
        pointer = self._pointer(workflow)
        if not pointer.is_file():
            return None
        return json.loads(pointer.read_text(encoding="utf-8"))["hash"]

    def publish(self, program: Program) -> str:
        return self.publish_report(program).hash

    def publish_report(self, program: Program, *, replace: bool = True, publisher: str | None = None) -> Published:
        """Store ``program``, repairing a damaged copy; point its workflows at it (moving others only if ``replace``)."""
        text = program_to_json(program)
        digest = content_hash(program)
        previous = {name: self.current(name) for name in program.workflows}
        replaced = {name: old for name, old in previous.items() if old is not None and old != digest}
        if replaced and not replace:
            raise PublishConflict(digest, replaced)
        target = self.root / "programs" / f"{digest}.json"
        repaired = target.exists() and text_hash(target.read_text(encoding="utf-8")) != digest
        if repaired or not target.exists():
            _write_atomic(target, text)
        pointer = {"hash": digest, "publisher": publisher or default_publisher(),
                   "published": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}
        for name in program.workflows:
            if previous[name] != digest or not self._pointer(name).is_file():
                _write_atomic(self._pointer(name), json.dumps(pointer))
        return Published(digest, replaced, repaired)

    def published(self) -> list[str]:
        """Qualified names of every published workflow, sorted."""
        folder = self.root / "workflows"
        return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []

    def load(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        text, program_hash = self.fetch(workflow, program_hash)
        check_workflow(text, workflow, program_hash)
        return text, program_hash

    def fetch(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        checked_names(workflow, program_hash)
        if program_hash is None:
            program_hash = self.current(workflow)
            if program_hash is None:
                raise LookupError(f"no published program holds workflow '{workflow}'")
        path = self.root / "programs" / f"{program_hash}.json"
        if not path.is_file():
            raise LookupError(f"no program with hash {program_hash} is published")
        return verified(path.read_text(encoding="utf-8"), program_hash), program_hash


def trim_program(text: str, workflow: str) -> str:
    """The canonical JSON of only what ``workflow`` can reach (see ``trim_program_data``).

    ``text`` is canonical (the store checks it hashes to its name), so a
    workflow that reaches all of it gets ``text`` itself.
    """
    data = program_data(text)
    trimmed = trim_program_data(data, workflow)
    return text if trimmed is data else canonical_json(trimmed)


def trim_program_data(data: dict, workflow: str) -> dict:
    """A compiled program's parsed JSON cut to what ``workflow`` can reach: its facets, schemas (called or
    used as types, which the typed boundaries check) and implicits; ``data`` itself when it reaches all.

    Runs pin this in history (the hash stays the published program's), so a
    registry holding many workflows does not weigh on every run's history.
    It works on the JSON as parsed, without building the model: a run's
    first LoadProgram of a 10,000-step program spent seconds validating and
    re-serialising it (the run's program is validated where it is unpacked,
    program/pinned.py).
    """
    all_facets, all_schemas, all_implicits = data.get("facets", {}), data.get("schemas", {}), data.get("implicits", {})
    facets: set[str] = set()
    schemas: set[str] = set()
    pending = [workflow]
    while pending:
        name = pending.pop()
        if name in facets:
            continue
        if name in all_schemas:
            if name not in schemas:  # and the schemas its fields are typed with
                schemas.add(name)
                pending.extend(f["type"]["name"] for f in all_schemas[name].get("fields", []))
            continue
        decl = all_facets.get(name)
        if decl is None:
            continue
        facets.add(name)
        pending.extend(p["type"]["name"] for p in [*decl.get("params", []), *decl.get("returns", [])])
        pending.extend(_mixins(decl))  # types the boundaries check, above; signature mixins
        for implicit in all_implicits.get(name, []):
            pending.extend(_mixins(implicit["call"]))
        pending.extend(_called(decl))
    implicits = {name: imps for name, imps in all_implicits.items() if name in facets or name in schemas}
    if len(facets) == len(all_facets) and len(schemas) == len(all_schemas) and len(implicits) == len(all_implicits):
        return data
    return {
        "format": data["format"],
        "facets": {name: all_facets[name] for name in facets},
        "schemas": {name: all_schemas[name] for name in schemas},
        "implicits": implicits,
    }


def _mixins(node: dict) -> list[str]:
    return [m["facet"] for m in node.get("mixins", []) if m.get("facet")]


def _called(decl: dict) -> list[str]:
    """Qualified names every call and mixin in ``decl``'s bodies and catch (nested ones included) refers to:
    the steps program.walk visits, read from the program's JSON."""
    found: list[str] = []
    blocks = list(decl.get("blocks", []))
    if decl.get("catch"):
        blocks.append(decl["catch"]["block"])
    while blocks:
        block = blocks.pop()
        for step in block.get("steps", []):
            call = step["call"]
            if call.get("facet"):
                found.append(call["facet"])
            found.extend(_mixins(call))
            blocks.extend(step.get("blocks", []))
            if step.get("catch"):
                blocks.append(step["catch"]["block"])
        blocks.extend(case["body"] for case in block.get("cases", []))
    return found
