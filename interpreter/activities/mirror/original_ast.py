"""A compiled program in the original runtime's shapes: its declaration tree and its flow's facet definitions.

The original dashboard reads a flow's ``compiled_ast`` as that runtime's JSON
AST (``{"type": "Program", "declarations": [Namespace, FacetDecl,
EventFacetDecl, WorkflowDecl, SchemaDecl, ...]}``: declarations with params,
returns, doc and bodies of ``StepStmt``s) and builds its facet definitions
from ``flows.facets`` entries (``uuid``, ``name``, ``namespace_id``,
``parameters`` as ``[{name, value, type_hint}]``, ``return_type``,
``documentation``). This module writes both from a ``Program``. Statement ids
are the compiled ones, so a step document's ``statement_id`` finds its
statement here. Nothing reads these shapes back: the program itself stays in
``compiled_sources``.
"""

from __future__ import annotations

from typing import Any

from ...program import model as m
from . import ids

_DECL_TYPES = {"event": "EventFacetDecl", "facet": "FacetDecl", "workflow": "WorkflowDecl"}


def type_node(ref: m.TypeRef) -> Any:
    """``Long``; ``[Long]`` as ``{"type": "ArrayType", "elementType": "Long"}``."""
    node: Any = ref.name
    for _ in range(ref.depth):
        node = {"type": "ArrayType", "elementType": node}
    return node


def type_text(ref: m.TypeRef) -> str:
    return "[" * ref.depth + ref.name + "]" * ref.depth


def expr_node(expr: Any) -> dict[str, Any]:
    """An expression as the original AST writes it (literals evaluate as its parameter defaults do)."""
    if isinstance(expr, m.Lit):
        value = expr.value
        if value is None:
            return {"type": "Null"}
        kind = ("Boolean" if isinstance(value, bool) else "Int" if isinstance(value, int)
                else "Double" if isinstance(value, float) else "String")  # fmt: skip
        return {"type": kind, "value": value}
    if isinstance(expr, m.ParamRef):
        return {"type": "InputRef", "path": [expr.name]}
    if isinstance(expr, m.StepRef):
        return {"type": "StepRef", "path": [expr.step]}
    if isinstance(expr, m.Attr):
        target = expr_node(expr.target)
        if target["type"] in ("InputRef", "StepRef"):
            return {**target, "path": [*target["path"], expr.name]}
        return {"type": "AttributeExpr", "target": target, "name": expr.name}
    if isinstance(expr, m.Index):
        return {"type": "IndexExpr", "target": expr_node(expr.target), "index": expr_node(expr.index)}
    if isinstance(expr, m.ArrayLit):
        return {"type": "ArrayLiteral", "elements": [expr_node(item) for item in expr.items]}
    if isinstance(expr, m.MapLit):
        return {"type": "MapLiteral", "entries": [{"key": e.key, "value": expr_node(e.value)} for e in expr.entries]}
    if isinstance(expr, m.Unary):
        return {"type": "UnaryExpr", "operator": expr.op, "operand": expr_node(expr.operand)}
    if isinstance(expr, m.Binary):
        return {"type": "BinaryExpr", "operator": expr.op, "left": expr_node(expr.left), "right": expr_node(expr.right)}
    return {"type": "Null"}


def _param(param: m.Param) -> dict[str, Any]:
    node: dict[str, Any] = {"name": param.name, "type": type_node(param.type)}
    if param.default is not None:
        node["default"] = expr_node(param.default)
    return node


def _call(call: m.Call) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "CallExpr", "target": call.facet or call.name,
                            "args": [{"name": a.name, "value": expr_node(a.value)} for a in call.args]}  # fmt: skip
    if call.mixins:
        node["mixins"] = [{"type": "MixinCall", "target": mx.facet or mx.name, "alias": mx.alias,
                           "args": [{"name": a.name, "value": expr_node(a.value)} for a in mx.args]}
                          for mx in call.mixins]  # fmt: skip
    return node


def _yield(item: m.Yield) -> dict[str, Any]:
    return {"type": "YieldStmt", "call": {"type": "CallExpr", "target": item.target or item.name,
                                          "args": [{"name": a.name, "value": expr_node(a.value)} for a in item.args]}}


def _step(step: m.Step) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "StepStmt", "id": step.id, "name": step.name, "call": _call(step.call)}
    if step.blocks:
        node["body"] = _body(step.blocks)
    if step.catch is not None:
        node["catch"] = _block(step.catch.block)
    return node


def _block(block: m.Block) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "AndThenBlock", "steps": [_step(s) for s in block.steps]}
    if block.yields:
        node["yield"] = _yield(block.yields[0])
        node["yields"] = [_yield(y) for y in block.yields]
    if block.kind == "foreach":
        node["foreach"] = {"type": "ForeachClause", "variable": block.var or "item",
                           "iterable": expr_node(block.items) if block.items is not None else {"type": "Null"}}
    elif block.kind == "when":
        cases = []
        for case in block.cases:
            entry: dict[str, Any] = {"type": "WhenCase", "steps": [_step(s) for s in case.body.steps]}
            if case.condition is None:
                entry["default"] = True
            else:
                entry["condition"] = expr_node(case.condition)
            cases.append(entry)
        node["when"] = {"type": "WhenBlock", "cases": cases}
    elif block.kind == "script" and block.script is not None:
        node["script"] = {"type": "ScriptBlock", "language": block.script.language, "code": block.script.code}
    return node


def _body(blocks: list[m.Block]) -> Any:
    """One block as a dict, several as a list (as the original writes them)."""
    nodes = [_block(b) for b in blocks]
    return nodes[0] if len(nodes) == 1 else nodes


def _doc(text: str | None) -> dict[str, Any] | None:
    return {"description": text, "params": [], "returns": []} if text else None


def _short(qname: str) -> str:
    return qname.rsplit(".", 1)[-1]


def facet_node(decl: m.FacetDecl) -> dict[str, Any]:
    node: dict[str, Any] = {"type": _DECL_TYPES[decl.kind], "id": decl.qname, "name": _short(decl.qname or decl.name),
                            "params": [_param(p) for p in decl.params], "returns": [_param(r) for r in decl.returns]}
    if decl.doc:
        node["doc"] = _doc(decl.doc)
    if decl.blocks:
        node["body"] = _body(decl.blocks)
    if decl.mixins:
        node["mixins"] = [{"type": "MixinCall", "target": mx.facet or mx.name, "alias": mx.alias} for mx in decl.mixins]
    if decl.catch is not None:
        node["catch"] = _block(decl.catch.block)
    if decl.script is not None:
        node["script"] = {"type": "ScriptBlock", "language": decl.script.language, "code": decl.script.code}
    return node


def schema_node(decl: m.SchemaDecl) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "SchemaDecl", "id": decl.qname, "name": _short(decl.qname or decl.name),
                            "fields": [{"name": f.name, "type": type_node(f.type)} for f in decl.fields]}
    if decl.doc:
        node["doc"] = _doc(decl.doc)
    return node


def program_ast(program: m.Program) -> dict[str, Any]:
    """The program's declarations as the original AST: one flat Namespace node per (dotted) namespace."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for _, decl in sorted(program.facets.items()):
        groups.setdefault(decl.namespace, []).append(facet_node(decl))
    for _, schema_decl in sorted(program.schemas.items()):
        groups.setdefault(schema_decl.namespace, []).append(schema_node(schema_decl))
    for _, implicits in sorted(program.implicits.items()):
        for implicit in implicits:
            groups.setdefault(implicit.namespace, []).append(
                {"type": "ImplicitDecl", "name": implicit.name, "call": _call(implicit.call)})
    declarations = list(groups.pop("", []))
    declarations += [{"type": "Namespace", "name": ns, "declarations": decls} for ns, decls in sorted(groups.items())]
    return {"type": "Program", "declarations": declarations}


def namespaces(program: m.Program, digest: str) -> list[dict[str, Any]]:
    """The flow's NamespaceDefinitions (``uuid``, ``name``, ``path``, ``documentation``)."""
    names = sorted({f.namespace for f in program.facets.values() if f.namespace}
                   | {s.namespace for s in program.schemas.values() if s.namespace})  # fmt: skip
    return [{"uuid": ids.namespace_uuid(digest, ns), "name": ns, "path": "", "documentation": None} for ns in names]


def facet_definitions(program: m.Program, digest: str) -> list[dict[str, Any]]:
    """The flow's FacetDefinitions: every facet and event facet (workflows are in ``workflows``)."""
    result = []
    for qname, decl in sorted(program.facets.items()):
        if decl.kind == "workflow":
            continue
        result.append({
            "uuid": ids.facet_uuid(digest, qname),
            "name": qname,
            "namespace_id": ids.namespace_uuid(digest, decl.namespace) if decl.namespace else "",
            "parameters": [{"name": p.name, "value": None, "type_hint": type_text(p.type)} for p in decl.params],
            "return_type": ", ".join(f"{r.name}: {type_text(r.type)}" for r in decl.returns) or None,
            "documentation": decl.doc,
        })  # fmt: skip
    return result
