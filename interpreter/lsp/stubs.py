"""A file's interface: its declarations without their bodies, for checking other files.

When an edit leaves a file's interface unchanged, no other file can see a
difference, so only the edited file is checked again. The other files take
part in that check as stubs. A declaration the checked files can read (a
name they write, and what its signature reads in turn: mixins, types,
implicits, the facets its body always calls) comes with its signature,
mixins, catch, script-written returns and those calls (for the recursion
check), all that checking someone else's body reads of it; every other
declaration comes as its name and kind alone, enough for did-you-mean,
duplicates and the program-wide search by short name.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..program.model import (
    BUILTIN_TYPES,
    Block,
    Call,
    Catch,
    FacetDecl,
    ImplicitDecl,
    NamespaceDecl,
    Param,
    SchemaDecl,
    SourceFile,
    Step,
    Use,
    Yield,
)
from ..program.walk import walk

Interface = dict[str, tuple[str, int, int]]
"""Qualified name (``namespace:`` prefix for namespaces) → its stub's text without positions, and its line and column.

Positions are apart because only a duplicate's message cites another file's
position ("first declared at"): a declaration that only moved (a line added
above it) concerns the files that declare the same name, not those that use it.
"""

_LOC = re.compile(r'"loc":\{"file":"[^"\\]*","line":\d+,"col":\d+\},?')


def short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class StubDecl:
    """One declaration of a stub: its stub pickled, and the short names its signature reads."""

    name: str
    qname: str
    fingerprint: str
    line: int
    col: int
    needs: frozenset[str]
    implicit_of: str | None
    blob: bytes
    light: FacetDecl | SchemaDecl | ImplicitDecl

    def copy(self, full: bool) -> FacetDecl | SchemaDecl | ImplicitDecl:
        """A fresh copy (the compiler fills trees in place): the full stub, or only its name and kind."""
        if full:
            return pickle.loads(self.blob)
        if isinstance(self.light, ImplicitDecl):  # its call is resolved in place
            return self.light.model_copy(update={"call": self.light.call.model_copy()})
        return self.light.model_copy()  # the compiler assigns a bare declaration's fields, never mutates them


@dataclass(frozen=True)
class StubBlock:
    """A namespace block (``namespace`` None: the file's top level) and its declarations."""

    namespace: str | None
    uses: tuple[Use, ...]
    decls: tuple[StubDecl, ...]


@dataclass(frozen=True)
class FileStub:
    path: str
    blocks: tuple[StubBlock, ...]

    def interface(self) -> Interface:
        out: Interface = {}
        for block in self.blocks:
            if block.namespace is not None:
                out[f"namespace:{block.namespace}"] = ("", 0, 0)
            out.update((decl.qname, (decl.fingerprint, decl.line, decl.col)) for decl in block.decls)
        return out

    def assemble(self, wanted: set[str]) -> SourceFile:
        """A source of this file's stubs: in full those ``wanted`` (see ``wanted_names``), else names only."""
        decls: list = []
        for block in self.blocks:
            copies = [d.copy(d.name in wanted or d.implicit_of in wanted) for d in block.decls]
            if block.namespace is None:
                decls.extend(copies)
            else:
                decls.append(NamespaceDecl(name=block.namespace, uses=list(block.uses), decls=copies))
        return SourceFile(path=self.path, decls=decls)


def _type_names(params: Iterable[Param]) -> set[str]:
    return {short(p.type.name) for p in params if p.type.name not in BUILTIN_TYPES}


def _unconditional_calls(blocks: list[Block]) -> list[str]:
    """Facets a body always calls, as written: what the compiler's recursion check follows."""
    names: list[str] = []
    pending = [b for b in blocks if b.kind == "steps"]
    while pending:
        for step in pending.pop(0).steps:
            if step.blocks:
                pending.extend(b for b in step.blocks if b.kind == "steps")
            else:
                names.append(step.call.name)
    return names


def _stub_decl(decl, namespace: str) -> StubDecl:
    qname = f"{namespace}.{decl.name}" if namespace else decl.name
    implicit_of = None
    if isinstance(decl, FacetDecl):
        kept = [block for block in decl.blocks if block.kind == "script"]
        calls = _unconditional_calls(decl.blocks)
        if len(kept) < len(decl.blocks):  # a body stays a body: a facet without one exposes its parameters
            kept.append(Block(kind="steps", steps=[Step(name=f"s{i}", call=Call(name=name))
                                                   for i, name in enumerate(calls)]))
        catch = Catch(block=Block(kind="steps"), loc=decl.catch.loc) if decl.catch is not None else None
        full = decl.model_copy(update={"blocks": kept, "catch": catch})
        needs = _type_names(decl.params) | _type_names(decl.returns) | {short(m.name) for m in decl.mixins}
        needs |= {short(name) for name in calls}
        light = FacetDecl(kind=decl.kind, name=decl.name, loc=decl.loc)
    elif isinstance(decl, SchemaDecl):
        full, needs = decl, _type_names(decl.fields)
        light = SchemaDecl(name=decl.name, loc=decl.loc)
    else:
        full, implicit_of = decl, short(decl.call.name)
        needs = {implicit_of}
        light = ImplicitDecl(name=decl.name, call=Call(name=decl.call.name, loc=decl.call.loc), loc=decl.loc)
    fingerprint = _LOC.sub("", full.model_dump_json())
    line, col = (decl.loc.line, decl.loc.col) if decl.loc else (0, 0)
    return StubDecl(decl.name, qname, fingerprint, line, col, frozenset(needs), implicit_of, pickle.dumps(full),
                    light)


def file_stub(source: SourceFile) -> FileStub:
    """The stub of a fresh parse (before the compiler fills it)."""
    blocks: list[StubBlock] = []
    top: list[StubDecl] = []
    for decl in source.decls:
        if isinstance(decl, NamespaceDecl):
            if top:
                blocks.append(StubBlock(None, (), tuple(top)))
                top = []
            inner = tuple(_stub_decl(d, decl.name) for d in decl.decls)
            blocks.append(StubBlock(decl.name, tuple(decl.uses), inner))
        else:
            top.append(_stub_decl(decl, ""))
    if top:
        blocks.append(StubBlock(None, (), tuple(top)))
    return FileStub(source.path, tuple(blocks))


def wanted_names(written: set[str], stubs: Iterable[FileStub]) -> set[str]:
    """Short names whose declarations the checked files can read: ``written`` and what their signatures read."""
    by_name: dict[str, list[StubDecl]] = {}
    for file in stubs:
        for block in file.blocks:
            for decl in block.decls:
                by_name.setdefault(decl.name, []).append(decl)
                if decl.implicit_of:
                    by_name.setdefault(decl.implicit_of, []).append(decl)
    wanted, todo = set(), list(written)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.add(name)
        for decl in by_name.get(name, ()):
            todo.extend(decl.needs - wanted)
    return wanted


def written_names(source: SourceFile) -> set[str]:
    """Short names of every declaration a tree writes: calls, mixins, types, yields, implicits."""
    names: set[str] = set()
    stack: list = list(source.decls)
    while stack:
        node = stack.pop()
        if isinstance(node, NamespaceDecl):
            stack.extend(node.decls)
        elif isinstance(node, FacetDecl):
            names |= _type_names(node.params) | _type_names(node.returns)
            names.update(short(m.name) for m in node.mixins)
            for _, inner in walk(node):
                if isinstance(inner, Step):
                    names.add(short(inner.call.name))
                    names.update(short(m.name) for m in inner.call.mixins)
                elif isinstance(inner, Yield):
                    names.add(short(inner.name))
        elif isinstance(node, SchemaDecl):
            names |= _type_names(node.fields)
        elif isinstance(node, ImplicitDecl):
            names.add(short(node.call.name))
    return names


def changed_names(before: Interface, after: Interface) -> tuple[set[str], set[str]]:
    """Short names of declarations and namespaces added, removed or changed; and of those only moved."""
    changed, moved = set(), set()
    for key in before.keys() | after.keys():
        old, new = before.get(key), after.get(key)
        if old is None or new is None or old[0] != new[0]:
            changed.add(short(key.removeprefix("namespace:")))
        elif old != new:
            moved.add(short(key))
    return changed, moved
