"""Every name of one file, where it is written and what it names, built from the compiler's resolved tree.

An occurrence names a ``Key``: a declaration (``("decl", qname)``), a
namespace, a parameter, return or schema field of a declaration, a step or a
foreach variable (those two by where they are declared). A name whose meaning
depends on another file's declaration (an argument name, ``step.field``)
is kept as a ``Member`` and resolved when asked (``Symbols.resolve``), so an
unchanged file's index stays right when another file's facet changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..program.model import (
    BUILTIN_TYPES,
    ArrayLit,
    Attr,
    Binary,
    Block,
    Call,
    FacetDecl,
    ImplicitDecl,
    Index,
    Loc,
    MapLit,
    MixinCall,
    NamespaceDecl,
    Param,
    ParamRef,
    SchemaDecl,
    SourceFile,
    Step,
    StepRef,
    Unary,
)
from ..program.walk import steps_of
from .text import Span, Text

Key = tuple
"""``("decl", qname)``, ``("ns", name)``, ``("param"|"return"|"field", owner, name)``, ``("step"|"var", path, line, col)``."""

Role = Literal["arg", "read", "yield", "param"]


@dataclass(frozen=True)
class Member:
    """A name whose declaration is found through facet ``owner``: an argument, a field read, a yielded return."""

    owner: str
    name: str
    role: Role


@dataclass(frozen=True)
class Occurrence:
    span: Span
    target: Key | Member | None
    definition: bool = False


@dataclass
class Symbol:
    """A declared name: what it is, where, and the model node that says the rest (for hover)."""

    key: Key
    name: str
    kind: str
    span: Span | None
    node: Any = None
    owner: str = ""
    path: str | None = None
    children: list[Symbol] = field(default_factory=list)


@dataclass
class Scope:
    """A facet declaration's body, for completion: where it starts, what it sees, its steps and parameters."""

    line: int
    decl: str
    namespace: str
    uses: tuple[str, ...]
    steps: dict[str, Step] = field(default_factory=dict)
    loop_vars: list[str] = field(default_factory=list)


@dataclass
class FileIndex:
    path: str
    occurrences: list[Occurrence] = field(default_factory=list)
    symbols: dict[Key, Symbol] = field(default_factory=dict)
    outline: list[Symbol] = field(default_factory=list)
    scopes: list[Scope] = field(default_factory=list)
    namespaces: list[tuple[int, str, tuple[str, ...]]] = field(default_factory=list)
    written: set[str] = field(default_factory=set)
    declared: set[str] = field(default_factory=set)

    def at(self, line: int, col: int) -> Occurrence | None:
        """The occurrence under a 0-based position (the innermost when spans touch)."""
        found = [o for o in self.occurrences if o.span.contains(line, col)]
        return min(found, key=lambda o: o.span.end - o.span.start) if found else None

    def scope_at(self, line: int) -> Scope | None:
        before = [s for s in self.scopes if s.line <= line]
        return before[-1] if before else None

    def namespace_at(self, line: int) -> tuple[str, tuple[str, ...]]:
        before = [(name, uses) for start, name, uses in self.namespaces if start <= line]
        return before[-1] if before else ("", ())


def _owners(tree: SourceFile):
    """Every declaration and call of a tree (the nodes that hold mixins)."""
    stack: list = list(tree.decls)
    while stack:
        node = stack.pop()
        if isinstance(node, NamespaceDecl):
            stack.extend(node.decls)
        elif isinstance(node, FacetDecl):
            yield node
            yield from (step.call for step in steps_of(node))
        elif isinstance(node, ImplicitDecl):
            yield node.call


def policy_mixins(tree: SourceFile) -> dict[int, list[MixinCall]]:
    """The mixins of each declaration and call before the compiler takes policies out (they stay named)."""
    return {id(owner): list(owner.mixins) for owner in _owners(tree) if owner.mixins}


class _Builder:
    def __init__(self, tree: SourceFile, text: Text, mixins: dict[int, list[MixinCall]]):
        self.text = text
        self.mixins = mixins
        self.index = FileIndex(tree.path)

    # ---------------------------------------------------------------- recording

    def _occur(self, span: Span | None, target, definition: bool = False) -> None:
        if span is not None:
            self.index.occurrences.append(Occurrence(span, target, definition))

    def _define(self, key: Key, name: str, kind: str, span: Span | None, node: Any = None,
                owner: str = "", parent: Symbol | None = None) -> Symbol:
        symbol = Symbol(key, name, kind, span, node, owner, self.index.path)
        self.index.symbols[key] = symbol
        (parent.children if parent is not None else self.index.outline).append(symbol)
        self._occur(span, key, definition=True)
        return symbol

    def _reference(self, loc, name: str, qname: str | None) -> None:
        """A dotted declaration name as written: its last segment names ``qname``, its prefixes namespaces."""
        spans = self.text.segments(loc)
        if not spans:
            return
        self.index.written.add(name.rsplit(".", 1)[-1])
        self._occur(spans[-1], ("decl", qname) if qname else None)
        if qname:
            parts = qname.split(".")
            for i, span in enumerate(spans[:-1]):
                self._occur(span, ("ns", ".".join(parts[: len(parts) - len(spans) + i + 1])))

    # ---------------------------------------------------------------- declarations

    def build(self, tree: SourceFile) -> FileIndex:
        self._decls(tree.decls, "", (), None)
        self.index.occurrences.sort(key=lambda o: (o.span.line, o.span.start))
        return self.index

    def _decls(self, decls: list, namespace: str, uses: tuple[str, ...], parent: Symbol | None) -> None:
        for decl in decls:
            if isinstance(decl, NamespaceDecl):
                self._namespace(decl, namespace, parent)
            elif isinstance(decl, FacetDecl):
                self._facet(decl, namespace, uses, parent)
            elif isinstance(decl, SchemaDecl):
                symbol = self._declaration(decl, "schema", parent)
                for param in decl.fields:
                    self._param(param, ("field", decl.qname, param.name), "field", decl.qname, symbol)
            elif isinstance(decl, ImplicitDecl):
                self._declaration(decl, "implicit", parent)
                self._call(decl.call, None)

    def _namespace(self, decl: NamespaceDecl, outer: str, parent: Symbol | None) -> None:
        name = f"{outer}.{decl.name}" if outer else decl.name
        spans = self.text.segments(decl.loc)
        uses = tuple(u.name for u in decl.uses)
        self.index.declared.add(name.rsplit(".", 1)[-1])
        if decl.loc is not None:
            self.index.namespaces.append((decl.loc.line - 1, name, uses))
        symbol = self._define(("ns", name), name, "namespace", spans[-1] if spans else None, decl, parent=parent)
        parts = name.split(".")
        for i, span in enumerate(spans[:-1]):
            self._occur(span, ("ns", ".".join(parts[: len(parts) - len(spans) + i + 1])))
        for use in decl.uses:
            use_spans = self.text.segments(use.loc)
            self.index.written.add(use.name.rsplit(".", 1)[-1])
            for i, span in enumerate(use_spans):
                self._occur(span, ("ns", ".".join(use.name.split(".")[: i + 1])))
        self._decls(decl.decls, name, uses, symbol)

    def _declaration(self, decl, kind: str, parent: Symbol | None) -> Symbol:
        self.index.declared.add(decl.name)
        spans = self.text.segments(decl.loc)
        return self._define(("decl", decl.qname), decl.qname, kind, spans[0] if spans else None, decl,
                            parent=parent)

    def _param(self, param: Param, key: Key, kind: str, owner: str, parent: Symbol) -> None:
        spans = self.text.segments(param.loc)
        self._define(key, param.name, kind, spans[0] if spans else None, param, owner, parent)
        self._type(param)
        if param.default is not None:
            self._expr(param.default, _Body(owner, {}))

    def _type(self, param: Param) -> None:
        if param.type.name not in BUILTIN_TYPES:
            self._reference(param.type.loc, param.type.name, param.type.name)  # resolved: the qualified name

    def _facet(self, decl: FacetDecl, namespace: str, uses: tuple[str, ...], parent: Symbol | None) -> None:
        kind = {"event": "event facet"}.get(decl.kind, decl.kind)
        symbol = self._declaration(decl, kind, parent)
        for param in decl.params:
            self._param(param, ("param", decl.qname, param.name), "parameter", decl.qname, symbol)
        for param in decl.returns:
            self._param(param, ("return", decl.qname, param.name), "return", decl.qname, symbol)
        self._mixins(decl, None)
        scope = Scope(decl.loc.line - 1 if decl.loc else 0, decl.qname, namespace, uses)
        self.index.scopes.append(scope)
        body = _Body(decl.qname, {}, scope=scope, parent=symbol)
        blocks = list(decl.blocks) + ([decl.catch.block] if decl.catch else [])
        body = body.with_steps([s for b in blocks for s in b.steps])
        for block in blocks:
            self._block(block, body)

    def _mixins(self, owner, body: _Body | None) -> None:
        for mixin in self.mixins.get(id(owner), owner.mixins):
            self._reference(mixin.loc, mixin.name, mixin.facet)
            for arg in mixin.args:
                self._arg(arg, mixin.facet, "arg", body or _Body("", {}))

    # ---------------------------------------------------------------- bodies

    def _block(self, block: Block, body: _Body) -> None:
        if block.kind == "foreach" and block.var:
            spans = self.text.name_after(block.loc, "foreach")
            key = ("var", self.index.path, *(_start(spans) or (0, 0)))
            self._define(key, block.var, "foreach variable", spans[0] if spans else None, block, body.decl,
                         body.parent)
            if body.scope is not None:
                body.scope.loop_vars.append(block.var)
            if block.items is not None:
                self._expr(block.items, body)
            body = body.with_var(block.var, key)
        inner = body.with_steps(block.steps)
        for step in block.steps:
            self._step(step, inner)
        for item in block.yields:
            spans = self.text.name_after(item.loc, "yield")
            if spans:
                self._reference(_loc(spans[0]), item.name, item.target)
            for arg in item.args:
                self._arg(arg, item.target, "yield", inner)
        for case in block.cases:
            if case.condition is not None:
                self._expr(case.condition, inner)
            self._block(case.body, inner)

    def _step(self, step: Step, body: _Body) -> None:
        spans = self.text.segments(step.loc)
        key = ("step", self.index.path, *(_start(spans) or (0, 0)))
        symbol = self._define(key, step.name, "step", spans[0] if spans else None, step, body.decl, body.parent)
        if body.scope is not None:
            body.scope.steps.setdefault(step.name, step)
        body.keys[id(step)] = key
        self._call(step.call, body)
        tail = body.with_steps([step]).with_parent(symbol)
        for block in step.blocks:
            self._block(block, tail)
        if step.catch is not None:
            self._block(step.catch.block, tail)

    def _call(self, call: Call, body: _Body | None) -> None:
        self._reference(call.loc, call.name, call.facet)
        for arg in call.args:
            self._arg(arg, call.facet, "arg", body or _Body("", {}))
        self._mixins(call, body)

    def _arg(self, arg, owner: str | None, role: Role, body: _Body) -> None:
        spans = self.text.segments(arg.loc)
        if spans:
            self._occur(spans[0], Member(owner, arg.name, role) if owner else None)
        self._expr(arg.value, body)

    def _expr(self, expr, body: _Body) -> None:
        stack = [expr]
        while stack:
            node = stack.pop()
            if isinstance(node, ParamRef):
                spans = self.text.segments(node.loc)
                target = body.vars.get(node.name) or (Member(body.decl, node.name, "param") if body.decl else None)
                self._occur(spans[0] if spans else None, target)
            elif isinstance(node, StepRef):
                spans = self.text.segments(node.loc)
                self._occur(spans[0] if spans else None, body.lookup(node.step))
            elif isinstance(node, Attr):
                spans = self.text.segments(node.loc)
                if isinstance(node.target, StepRef):
                    step = body.step(node.target.step)
                    if step is not None and step.call.facet:
                        self._occur(spans[0] if spans else None, Member(step.call.facet, node.name, "read"))
                stack.append(node.target)
            elif isinstance(node, Index):
                stack.extend((node.target, node.index))
            elif isinstance(node, ArrayLit):
                stack.extend(node.items)
            elif isinstance(node, MapLit):
                stack.extend(entry.value for entry in node.entries)
            elif isinstance(node, Unary):
                stack.append(node.operand)
            elif isinstance(node, Binary):
                stack.extend((node.left, node.right))


def _loc(span: Span) -> Loc:
    return Loc(line=span.line + 1, col=span.start + 1)


def _start(spans: list[Span]) -> tuple[int, int] | None:
    return (spans[0].line, spans[0].start) if spans else None


@dataclass
class _Body:
    """Names visible in a body: steps by layer (innermost last), foreach variables, the outline parent."""

    decl: str
    keys: dict[int, Key]
    layers: tuple[dict[str, Step], ...] = ()
    vars: dict[str, Key] = field(default_factory=dict)
    scope: Scope | None = None
    parent: Symbol | None = None

    def with_steps(self, steps: list[Step]) -> _Body:
        layer: dict[str, Step] = {}
        for step in steps:
            layer.setdefault(step.name, step)
        return _Body(self.decl, self.keys, (*self.layers, layer), self.vars, self.scope, self.parent)

    def with_var(self, name: str, key: Key) -> _Body:
        return _Body(self.decl, self.keys, self.layers, {**self.vars, name: key}, self.scope, self.parent)

    def with_parent(self, parent: Symbol) -> _Body:
        return _Body(self.decl, self.keys, self.layers, self.vars, self.scope, parent)

    def step(self, name: str) -> Step | None:
        for layer in reversed(self.layers):
            if name in layer:
                return layer[name]
        return None

    def lookup(self, name: str) -> Key | None:
        if name in self.vars:
            return self.vars[name]
        step = self.step(name)
        return self.keys.get(id(step)) if step is not None else None


def build_index(tree: SourceFile, text: Text, mixins: dict[int, list[MixinCall]]) -> FileIndex:
    """The index of a tree the compiler has resolved; ``mixins`` from ``policy_mixins`` before it did."""
    return _Builder(tree, text, mixins).build(tree)
