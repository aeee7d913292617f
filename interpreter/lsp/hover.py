"""Hover: what a name is, written the way FFL declares it (signature, returns, fields, doc)."""

from __future__ import annotations

from ..program.exprtext import expr_text
from ..program.model import Block, FacetDecl, ImplicitDecl, NamespaceDecl, Param, SchemaDecl, Step, TypeRef
from .index import Symbol
from .symbols import Symbols


def _type(ref: TypeRef) -> str:
    return "[" * ref.depth + ref.name + "]" * ref.depth


def param_text(param: Param) -> str:
    default = f" = {expr_text(param.default)}" if param.default is not None else ""
    return f"{param.name}: {_type(param.type)}{default}"


def signature(decl: FacetDecl) -> str:
    """``event facet ns.F(a: Long = 1) => (r: String)`` with its mixins."""
    keyword = {"event": "event facet", "facet": "facet", "workflow": "workflow"}[decl.kind]
    text = f"{keyword} {decl.qname}({', '.join(map(param_text, decl.params))})"
    if decl.returns:
        text += f" => ({', '.join(map(param_text, decl.returns))})"
    for mixin in decl.mixins:
        text += f" with {mixin.facet or mixin.name}" + (f" as {mixin.alias}" if mixin.alias else "")
    return text


def _fence(code: str, *notes: str | None) -> str:
    return "\n\n".join([f"```ffl\n{code}\n```", *(n for n in notes if n)])


def _facet(decl: FacetDecl) -> str:
    queue = f"task queue: `{decl.queue}`" if decl.kind == "event" and not decl.qname.startswith("ffl.") else None
    if decl.policy is not None and decl.policy.queue:
        queue = f"task queue: `{decl.policy.queue}`"
    return _fence(signature(decl), queue, decl.doc)


def _returns(symbols: Symbols, qname: str | None) -> list[str]:
    decl = symbols.declaration(qname)
    if isinstance(decl, SchemaDecl):
        return [param_text(f) for f in decl.fields]
    if not isinstance(decl, FacetDecl):
        return []
    out = [param_text(r) for r in decl.returns]
    for mixin in decl.mixins:
        mixed = symbols.declaration(mixin.facet)
        if isinstance(mixed, FacetDecl):
            out += [param_text(r) for r in mixed.returns]
    return out


def render(symbol: Symbol, symbols: Symbols) -> str:
    node = symbol.node
    if isinstance(node, FacetDecl):
        return _facet(node)
    if isinstance(node, SchemaDecl):
        fields = "".join(f"\n    {param_text(f)}" for f in node.fields)
        return _fence(f"schema {node.qname} {{{fields}\n}}", node.doc)
    if isinstance(node, ImplicitDecl):
        args = ", ".join(f"{a.name} = {expr_text(a.value)}" for a in node.call.args)
        return _fence(f"implicit {node.qname} = {node.call.facet or node.call.name}({args})", node.doc)
    if isinstance(node, NamespaceDecl):
        return _fence(f"namespace {symbol.name}", node.doc)
    if isinstance(node, Step):
        call = node.call
        returns = _returns(symbols, call.facet)
        shown = f" => ({', '.join(returns)})" if returns else ""
        callee = symbols.declaration(call.facet)
        kind = "schema" if isinstance(callee, SchemaDecl) else (callee.kind if callee else "call")
        return _fence(f"step {node.name} = {call.facet or call.name}{shown}", f"calls the {kind} `{call.facet}`"
                      if call.facet else "calls an unknown facet")
    if isinstance(node, Param):
        what = {"parameter": "$.", "return": "return ", "field": "field "}.get(symbol.kind, "")
        owner = f"{symbol.kind} of `{symbol.owner}`"
        return _fence(f"{what}{param_text(node)}", owner)
    if isinstance(node, Block):
        return _fence(f"foreach {symbol.name}", f"variable of a foreach in `{symbol.owner}`")
    return _fence(symbol.name)
