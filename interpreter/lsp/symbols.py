"""Looking names up across a program's files: a key's declaration, a member's meaning, every occurrence."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from ..compiler.prelude import PRELUDE_PATH, PRELUDE_SOURCE, parse_prelude
from ..compiler.symbols import SymbolTable
from ..program.model import FacetDecl, SchemaDecl
from .index import FileIndex, Key, Member, Occurrence, Symbol, build_index
from .program import ProgramState
from .text import Text


@cache
def prelude_index() -> FileIndex:
    """The built-ins of namespace ``ffl``, indexed like a file (hover and completion read their docs)."""
    tree = parse_prelude()
    SymbolTable.build([tree])  # fills their qualified names
    return build_index(tree, Text(PRELUDE_SOURCE), {})


def is_real(path: str | None) -> bool:
    """Whether a symbol's path is a file of the workspace (the built-ins' is not)."""
    return bool(path) and path != PRELUDE_PATH


class Symbols:
    """The declarations and occurrences of one program, the built-ins included."""

    def __init__(self, program: ProgramState):
        indexes = [s.index for s in program.files.values() if s.index is not None]
        self.indexes: list[FileIndex] = [*indexes, prelude_index()]

    def symbol(self, key: Key | None) -> Symbol | None:
        if key is None:
            return None
        for index in self.indexes:
            found = index.symbols.get(key)
            if found is not None:
                return found
        return None

    def all(self, key: Key) -> list[Symbol]:
        """Every declaration of ``key`` (a namespace is declared once per block, in many files)."""
        return [index.symbols[key] for index in self.indexes if key in index.symbols]

    def declaration(self, qname: str | None) -> FacetDecl | SchemaDecl | None:
        found = self.symbol(("decl", qname)) if qname else None
        return found.node if found is not None and isinstance(found.node, (FacetDecl, SchemaDecl)) else None

    def resolve(self, target: Key | Member | None) -> Key | None:
        """The key an occurrence names; a member is looked up in its owner's signature and mixins."""
        if not isinstance(target, Member):
            return target
        decl = self.declaration(target.owner)
        if isinstance(decl, SchemaDecl):
            return ("field", decl.qname, target.name) if any(f.name == target.name for f in decl.fields) else None
        if decl is None:
            return None
        own_params = any(p.name == target.name for p in decl.params)
        if target.role in ("read", "yield") and any(r.name == target.name for r in decl.returns):
            return ("return", decl.qname, target.name)
        if target.role in ("arg", "param") and own_params:
            return ("param", decl.qname, target.name)
        for mixin in decl.mixins:
            mixed = self.declaration(mixin.facet)
            if not isinstance(mixed, FacetDecl):
                continue
            if target.role in ("read", "yield") and any(r.name == target.name for r in mixed.returns):
                return ("return", mixed.qname, target.name)
            if target.role != "yield" and not mixin.alias and any(p.name == target.name for p in mixed.params):
                return ("param", mixed.qname, target.name)
        if target.role == "read" and own_params:
            return ("param", decl.qname, target.name)  # a facet without a body holds its parameters
        return None

    def occurrences(self, key: Key) -> Iterator[tuple[str, Occurrence]]:
        """Every place ``key`` is written, declarations included, as (path, occurrence)."""
        for index in self.indexes:
            if not is_real(index.path):
                continue
            for occurrence in index.occurrences:
                if occurrence.target == key or (
                    isinstance(occurrence.target, Member) and self.resolve(occurrence.target) == key
                ):
                    yield index.path, occurrence
