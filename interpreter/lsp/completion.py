"""Completion: what may be written at the cursor, read from the line being typed and the program's index.

The line need not parse: the context comes from the text before the cursor
(``$.``, ``name.``, inside ``F(``), the names from the last good index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lsprotocol import types

from ..program.model import FacetDecl, SchemaDecl
from .hover import param_text, signature
from .index import FileIndex, Scope
from .symbols import Symbols
from .text import Text

KEYWORDS = ("namespace", "uses", "use", "facet", "event", "workflow", "schema", "implicit", "with", "as",
            "andThen", "yield", "foreach", "in", "when", "case", "catch", "prompt", "script", "python",
            "true", "false", "null")

_PARAM = re.compile(r"\$\.(\w*)\Z")
_MEMBER = re.compile(r"(?<![\w.$])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.(\w*)\Z")
_ARG_NAME = re.compile(r"(?:^|[(,])\s*(\w*)\Z")
_CALLEE = re.compile(r"([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)\s*\Z")
_GIVEN = re.compile(r"(?:^|[(,])\s*(\w+)\s*=")

K = types.CompletionItemKind


@dataclass(frozen=True)
class Item:
    label: str
    kind: types.CompletionItemKind
    detail: str = ""

    def to_lsp(self) -> types.CompletionItem:
        return types.CompletionItem(label=self.label, kind=self.kind, detail=self.detail or None)


def _lookup(symbols: Symbols, name: str, namespace: str, uses: tuple[str, ...]) -> FacetDecl | SchemaDecl | None:
    """The declaration a name written at a place means (local, then ``uses``, then top level or qualified)."""
    for qname in (f"{namespace}.{name}" if namespace else None, *(f"{u}.{name}" for u in uses), name):
        found = symbols.declaration(qname) if qname else None
        if found is not None:
            return found
    return None


def _members(symbols: Symbols, qname: str | None, catches: bool) -> list[Item]:
    """What ``step.`` may read when the step calls ``qname``."""
    decl = symbols.declaration(qname)
    if isinstance(decl, SchemaDecl):
        return [Item(f.name, K.Field, param_text(f)) for f in decl.fields]
    if decl is None:
        return []
    items = [Item(r.name, K.Field, param_text(r)) for r in decl.returns]
    for mixin in decl.mixins:
        mixed = symbols.declaration(mixin.facet)
        if isinstance(mixed, FacetDecl):
            items += [Item(r.name, K.Field, param_text(r)) for r in mixed.returns + mixed.params]
    if decl.kind != "event" and not decl.blocks and decl.script is None and decl.prompt is None:
        items += [Item(p.name, K.Field, param_text(p)) for p in decl.params]
    if catches or decl.catch is not None:
        items += [Item("error", K.Field, "error: String"), Item("error_type", K.Field, "error_type: String")]
    return items


def _parameters(symbols: Symbols, decl: FacetDecl | SchemaDecl | None) -> list[Item]:
    """Names a call of ``decl`` (or ``$.`` inside it) may use: parameters, fields, merged mixins' parameters."""
    if isinstance(decl, SchemaDecl):
        return [Item(f.name, K.Field, param_text(f)) for f in decl.fields]
    if decl is None:
        return []
    items = [Item(p.name, K.Variable, param_text(p)) for p in decl.params]
    for mixin in decl.mixins:
        mixed = symbols.declaration(mixin.facet)
        if mixin.alias:
            items.append(Item(mixin.alias, K.Variable, f"{mixin.alias}: {mixin.facet}"))
        elif isinstance(mixed, FacetDecl):
            items += [Item(p.name, K.Variable, param_text(p)) for p in mixed.params]
    return items


def _yieldable(symbols: Symbols, decl: FacetDecl | SchemaDecl | None) -> list[Item]:
    """Names ``yield F(...)`` may set: the returns of F and of its signature mixins."""
    if not isinstance(decl, FacetDecl):
        return []
    items = [Item(r.name, K.Field, param_text(r)) for r in decl.returns]
    for mixin in decl.mixins:
        mixed = symbols.declaration(mixin.facet)
        if isinstance(mixed, FacetDecl):
            items += [Item(r.name, K.Field, param_text(r)) for r in mixed.returns]
    return items


def _declarations(symbols: Symbols, prefix: str) -> list[Item]:
    """Declarations and namespaces directly inside namespace ``prefix`` (``ffl`` gives the built-ins)."""
    items: dict[str, Item] = {}
    for index in symbols.indexes:
        for key, symbol in index.symbols.items():
            if key[0] not in ("decl", "ns") or not symbol.name.startswith(prefix + "."):
                continue
            rest = symbol.name[len(prefix) + 1:]
            if "." in rest:
                rest = rest.split(".", 1)[0]
                items.setdefault(rest, Item(rest, K.Module, f"namespace {prefix}.{rest}"))
            elif key[0] == "decl":
                items[rest] = _declaration_item(rest, symbol.node)
            else:
                items.setdefault(rest, Item(rest, K.Module, f"namespace {symbol.name}"))
    return list(items.values())


def _declaration_item(label: str, node) -> Item:
    if isinstance(node, FacetDecl):
        return Item(label, K.Event if node.kind == "event" else K.Function, signature(node))
    if isinstance(node, SchemaDecl):
        return Item(label, K.Struct, f"schema {node.qname}")
    return Item(label, K.Constant, f"implicit {node.qname}")


def _visible(symbols: Symbols, namespace: str, uses: tuple[str, ...]) -> list[Item]:
    """Facets and schemas written by short name here, and the first segment of every namespace."""
    seen = {namespace, *uses, ""} if namespace else {*uses, ""}
    items: dict[str, Item] = {"ffl": Item("ffl", K.Module, "namespace ffl: built-ins and policies")}
    for index in symbols.indexes:
        for key, symbol in index.symbols.items():
            if key[0] == "ns":
                first = symbol.name.split(".", 1)[0]
                items.setdefault(first, Item(first, K.Module, f"namespace {first}"))
            elif key[0] == "decl" and isinstance(symbol.node, (FacetDecl, SchemaDecl)):
                where, _, short = symbol.name.rpartition(".")
                if where in seen:
                    items.setdefault(short, _declaration_item(short, symbol.node))
    return list(items.values())


def _open_call(before: str) -> tuple[str, str, bool] | None:
    """(callee as written, the arguments typed so far, whether it is a yield) inside an unclosed ``F(``."""
    depth = 0
    for at in range(len(before) - 1, -1, -1):
        char = before[at]
        if char in ")]}":
            depth += 1
        elif char in "[{":
            depth -= 1
            if depth < 0:
                return None
        elif char == "(":
            if depth == 0:
                callee = _CALLEE.search(before[:at])
                if callee is None:
                    return None
                is_yield = before[: callee.start()].rstrip().endswith("yield")
                return re.sub(r"\s", "", callee.group(1)), before[at:], is_yield
            depth -= 1
    return None


def complete(index: FileIndex | None, symbols: Symbols, text: Text, line: int, col: int) -> list[Item]:
    before = text.line(line)[:col]
    scope: Scope | None = index.scope_at(line) if index is not None else None
    namespace, uses = index.namespace_at(line) if index is not None else ("", ())
    if scope is not None:
        namespace, uses = scope.namespace, scope.uses
    if _PARAM.search(before):
        own = symbols.declaration(scope.decl) if scope is not None else None
        vars_ = [Item(v, K.Variable, "foreach variable") for v in (scope.loop_vars if scope else [])]
        return _parameters(symbols, own) + vars_
    member = _MEMBER.search(before)
    if member is not None:
        qualifier = member.group(1)
        step = scope.steps.get(qualifier) if scope is not None else None
        if step is not None:
            return _members(symbols, step.call.facet, step.catch is not None)
        if qualifier == "ffl":
            return _declarations(symbols, "ffl")
        full = f"{namespace}.{qualifier}" if namespace else qualifier
        return _declarations(symbols, qualifier) + (_declarations(symbols, full) if namespace else [])
    start = text.offset(scope.line if scope is not None else 0, 0)
    call = _open_call(text.source[start:text.offset(line, col)])
    if call is not None and _ARG_NAME.search(call[1]):
        callee = _lookup(symbols, call[0], namespace, uses)
        given = set(_GIVEN.findall(call[1]))
        offered = _yieldable(symbols, callee) if call[2] else _parameters(symbols, callee)
        return [item for item in offered if item.label not in given]
    items = [Item(word, K.Keyword) for word in KEYWORDS]
    items += _visible(symbols, namespace, uses)
    if scope is not None:
        items += [Item(name, K.Variable, f"step {name}") for name in scope.steps]
        items += [Item(v, K.Variable, "foreach variable") for v in scope.loop_vars]
    return items

