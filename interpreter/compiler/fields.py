"""What a step or record exposes: readable fields with their static types.

A type is ``(name, depth)`` (``("Long", 1)`` is ``[Long]``) or None when not
known; a field map of None means "cannot tell", so no field error is reported.
"""

from __future__ import annotations

from ..program.model import FacetDecl, Param, SchemaDecl, Step, TypeRef
from .scripts import result_keys
from .symbols import SymbolTable

Ty = tuple[str, int] | None
Fields = dict[str, Ty]

STRING: Ty = ("String", 0)
BOOLEAN: Ty = ("Boolean", 0)
LONG: Ty = ("Long", 0)
DOUBLE: Ty = ("Double", 0)
JSON: Ty = ("Json", 0)


def ty(ref: TypeRef | None) -> Ty:
    return None if ref is None else (ref.name, ref.depth)


def _add(out: Fields, params: list[Param]) -> None:
    for param in params:
        out.setdefault(param.name, ty(param.type))


def facet(table: SymbolTable, qname: str | None) -> FacetDecl | None:
    entry = table.by_qname.get(qname or "")
    return entry.decl if entry is not None and isinstance(entry.decl, FacetDecl) else None


def schema(table: SymbolTable, qname: str | None) -> SchemaDecl | None:
    entry = table.by_qname.get(qname or "")
    return entry.decl if entry is not None and isinstance(entry.decl, SchemaDecl) else None


def schema_fields(table: SymbolTable, t: Ty) -> tuple[str, Fields] | None:
    """The fields of a record type ``t`` when it is a (non-array) schema."""
    if t is None or t[1] != 0:
        return None
    decl = schema(table, t[0])
    if decl is None:
        return None
    out: Fields = {}
    _add(out, decl.fields)
    return decl.qname, out


def _script_returns(blocks, out: Fields) -> bool:
    """Add keys set by ``andThen script`` blocks; False when some script cannot be read."""
    for block in blocks:
        if block.kind == "script" and block.script is not None:
            keys = result_keys(block.script.code)
            if keys is None:
                return False
            for key in keys:
                out.setdefault(key, None)
    return True


def facet_fields(table: SymbolTable, decl: FacetDecl) -> Fields | None:
    """Returns of a facet, its signature mixins' fields, and its params if it just holds them."""
    out: Fields = {}
    _add(out, decl.returns)
    for mixin in decl.mixins:
        mixed = facet(table, mixin.facet)
        if mixed is None:
            return None
        _add(out, mixed.returns)
        _add(out, mixed.params)
    if decl.kind != "event" and not decl.blocks and decl.script is None and decl.prompt is None:
        _add(out, decl.params)
    if not _script_returns(decl.blocks, out):
        return None
    return out


def step_fields(table: SymbolTable, step: Step) -> Fields | None:
    """Fields readable as ``step.field``; None when the call is unresolved or unreadable.

    A catch on the step or on the called facet's declaration adds ``error``/``error_type``.
    """
    call = step.call
    decl = facet(table, call.facet)
    if call.kind == "schema":
        found = schema_fields(table, (call.facet or "", 0))
        out = dict(found[1]) if found else None
    else:
        out = facet_fields(table, decl) if decl is not None else None
    if out is None:
        return None
    if not _script_returns(step.blocks, out):
        return None
    if step.catch is not None or (decl is not None and decl.catch is not None):
        out.setdefault("error", STRING)
        out.setdefault("error_type", STRING)
    return out
