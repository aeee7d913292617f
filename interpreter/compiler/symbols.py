"""The program-wide symbol table: every declaration of every file under its qualified name.

Namespaces may repeat across files, so declarations are merged here before any
name is resolved; lookups follow the visibility rules of docs/language.md (qualified
name, then the declaration's own namespace, then its ``uses``), and last the
whole program by short name (reported as a warning by the resolver).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..program.builtins import NAMESPACE as BUILTIN_NAMESPACE
from ..program.builtins import is_builtin
from ..program.model import FacetDecl, ImplicitDecl, NamespaceDecl, SchemaDecl, SourceFile, Use
from .diagnostics import Diagnostic
from .prelude import PRELUDE_PATH

Declaration = FacetDecl | SchemaDecl | ImplicitDecl


@dataclass(frozen=True)
class Context:
    """Where a declaration was written: its namespace and the ``uses`` of its namespace block."""

    namespace: str
    uses: tuple[str, ...] = ()
    file: str = ""


@dataclass
class Entry:
    decl: Declaration
    ctx: Context


@dataclass(frozen=True)
class Lookup:
    """Outcome of a name lookup: ``qname`` when found, ``candidates`` when ambiguous.

    ``foreign`` marks an outcome of the program-wide search by short name: the
    name is neither local nor visible through ``uses``.
    """

    qname: str | None
    candidates: tuple[str, ...] = ()
    foreign: bool = False

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


@dataclass
class SymbolTable:
    entries: list[Entry] = field(default_factory=list)
    by_qname: dict[str, Entry] = field(default_factory=dict)
    by_short: dict[str, list[str]] = field(default_factory=dict)
    namespaces: set[str] = field(default_factory=set)
    uses: list[tuple[Use, Context]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def build(cls, files: list[SourceFile]) -> SymbolTable:
        """Merge the files' declarations, setting qname/namespace in place.

        The compiler owns the parsed trees it is given and fills their resolved
        fields directly: copying them would cost more than the whole validation.
        """
        table = cls()
        for source in files:
            table._add_decls(source.decls, Context("", (), source.path))
        return table

    def _add_decls(self, decls: list, ctx: Context) -> None:
        for decl in decls:
            if isinstance(decl, NamespaceDecl):
                name = f"{ctx.namespace}.{decl.name}" if ctx.namespace else decl.name
                if is_builtin(name) and ctx.file != PRELUDE_PATH:
                    self.diagnostics.append(Diagnostic.at(
                        decl.loc, f"namespace '{name}' is reserved: '{BUILTIN_NAMESPACE}' holds the built-in facets "
                                  "(ffl.Sleep, ffl.WaitForSignal, ffl.Retry, ...); choose another name", ctx.file))
                    continue
                inner = Context(name, tuple(u.name for u in decl.uses), ctx.file)
                self.namespaces.add(name)
                self.uses.extend((use, inner) for use in decl.uses)
                self._add_decls(decl.decls, inner)
            else:
                self._add(decl, ctx)

    def _add(self, decl: Declaration, ctx: Context) -> None:
        qname = f"{ctx.namespace}.{decl.name}" if ctx.namespace else decl.name
        first = self.by_qname.get(qname)
        if first is not None:
            where = first.decl.loc or ""
            self.diagnostics.append(
                Diagnostic.at(decl.loc, f"duplicate declaration '{qname}' (first declared at {where})", ctx.file)
            )
            return
        decl.qname = qname
        decl.namespace = ctx.namespace
        entry = Entry(decl, ctx)
        self.entries.append(entry)
        self.by_qname[qname] = entry
        if ctx.file != PRELUDE_PATH:  # built-ins resolve by qualified name or through `uses ffl`, never program-wide
            self.by_short.setdefault(decl.name, []).append(qname)

    def user_entries(self) -> list[Entry]:
        """The program's own declarations: every entry but the prelude's."""
        return [entry for entry in self.entries if entry.ctx.file != PRELUDE_PATH]

    def namespace_exists(self, name: str) -> bool:
        prefix = name + "."
        return name in self.namespaces or any(ns.startswith(prefix) for ns in self.namespaces)

    def namespace_names(self) -> set[str]:
        """Every name ``uses`` accepts: each namespace and each of its dotted prefixes."""
        names: set[str] = set()
        for namespace in self.namespaces:
            parts = namespace.split(".")
            names.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
        return names

    def lookup(self, name: str, ctx: Context, accept: Callable[[Declaration], bool] | None = None) -> Lookup:
        """Resolve a name as written in ``ctx``, else search the program for its short name.

        ``accept`` limits that last search to declarations of the wanted kind.
        """
        found = self.visible(name, ctx)
        if found.qname is not None or found.ambiguous or "." in name:
            return found
        matches = tuple(q for q in self.by_short.get(name, ()) if accept is None or accept(self.by_qname[q].decl))
        if len(matches) == 1:
            return Lookup(matches[0], foreign=True)
        return Lookup(None, tuple(sorted(matches)), foreign=bool(matches))

    def visible(self, name: str, ctx: Context) -> Lookup:
        """Resolve a name as written in ``ctx``; a short name seen through two routes is ambiguous."""
        if "." in name:
            if name in self.by_qname:
                return Lookup(name)
            relative = f"{ctx.namespace}.{name}" if ctx.namespace else ""
            return Lookup(relative) if relative in self.by_qname else Lookup(None)
        if ctx.namespace and f"{ctx.namespace}.{name}" in self.by_qname:
            return Lookup(f"{ctx.namespace}.{name}")
        candidates: list[str] = []
        for use in ctx.uses:
            qname = f"{use}.{name}"
            if qname in self.by_qname and qname not in candidates:
                candidates.append(qname)
        if name in self.by_qname and name not in candidates:
            candidates.append(name)
        if len(candidates) == 1:
            return Lookup(candidates[0])
        return Lookup(None, tuple(candidates))
