"""Declaration-level checks: signatures, mixins, scripts, prompts, implicits, schemas."""

from __future__ import annotations

import re

from ..program.model import FacetDecl, ImplicitDecl, Param, SchemaDecl
from .calls import implicit_problems, mixin_problems
from .diagnostics import Diagnostic
from .exprs import ExprChecker
from .fields import facet, ty
from .scope import Reads, Scope
from .scripts import result_keys
from .suggest import did_you_mean
from .symbols import Entry, SymbolTable
from .validate_body import check_body

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)*\s*\}")


def placeholders(text: str) -> list[str]:
    """Names in ``{name}`` / ``{name.field}`` placeholders (``{{``/``}}`` are literal braces)."""
    return [m.group(1) for m in _PLACEHOLDER.finditer(text) if m.group(1) is not None]


def _unbraced(placeholder: str) -> str:
    return placeholder[1:-1]


class DeclChecker:
    def __init__(self, table: SymbolTable, implicits: dict[str, list[ImplicitDecl]]):
        self.table = table
        self.implicits = implicits
        self.out: list[Diagnostic] = []

    def run(self) -> list[Diagnostic]:
        for entry in self.table.entries:
            if isinstance(entry.decl, FacetDecl):
                self.facet(entry)
            elif isinstance(entry.decl, SchemaDecl):
                self.unique(entry.decl.fields, "field", entry.ctx.file)
            elif isinstance(entry.decl, ImplicitDecl):
                self.implicit(entry)
        return self.out

    def report(self, loc, message: str, file: str) -> None:
        self.out.append(Diagnostic.at(loc, message, file))

    def unique(self, params: list[Param], what: str, file: str) -> None:
        seen: set[str] = set()
        for param in params:
            if param.name in seen:
                self.report(param.loc, f"duplicate {what} '{param.name}'", file)
            seen.add(param.name)

    def params_of(self, decl: FacetDecl, file: str) -> dict | None:
        """``$.`` names of the body: parameters, signature-mixin parameters, pre-script keys."""
        names = {p.name: ty(p.type) for p in decl.params}
        for mixin in decl.mixins:
            mixed = facet(self.table, mixin.facet)
            if mixin.alias:
                names.setdefault(mixin.alias, None)
            elif mixed is not None:
                for p in mixed.params:
                    names.setdefault(p.name, ty(p.type))
        if decl.script is not None:
            if not decl.script.code.strip():
                self.report(decl.script.loc or decl.loc, "empty script", file)
            keys = result_keys(decl.script.code)
            if keys is None:
                return None
            for key in keys:
                names.setdefault(key, None)
        return names

    def facet(self, entry: Entry) -> None:
        decl: FacetDecl = entry.decl  # type: ignore[assignment]
        file = entry.ctx.file
        self.unique(decl.params, "parameter", file)
        self.unique(decl.returns, "return", file)
        params = self.params_of(decl, file)
        scope = Scope(params=params,
                      yield_targets=(decl.qname, *[m.facet for m in decl.mixins if m.facet]))
        exprs = ExprChecker(self.table, lambda loc, msg: self.report(loc, msg, file), set())
        signature = Scope(params={p.name: ty(p.type) for p in decl.params})
        for param in [*decl.params, *decl.returns]:
            if param.default is not None:
                exprs.check(param.default, signature, Reads(), param.loc)
        for mixin in decl.mixins:
            for arg in mixin.args:
                exprs.check(arg.value, signature, Reads(), arg.loc or mixin.loc)
            for loc, message in mixin_problems(self.table, mixin):
                self.report(loc or mixin.loc, message, file)
        if decl.prompt is not None:
            self.prompt(decl, file)
        check_body(self.table, self.implicits, decl, scope, file, self.out)

    def prompt(self, decl: FacetDecl, file: str) -> None:
        prompt = decl.prompt
        assert prompt is not None
        if prompt.template is None:
            self.report(prompt.loc or decl.loc, f"prompt block of '{decl.qname}' needs a 'template'", file)
        known = {p.name for p in decl.params}
        for key in ("system", "template"):
            for name in placeholders(getattr(prompt, key) or ""):
                if name in known:
                    continue
                near = did_you_mean(name, (f"{{{p}}}" for p in known), key=_unbraced)
                message = f"unknown prompt placeholder '{{{name}}}': '{decl.qname}' has no parameter '{name}'{near}"
                here = prompt._entry_locs.get(key) or prompt.loc or decl.loc
                self.report(here, message, file)
                if decl.loc is not None and here is not None and here.line != decl.loc.line:
                    self.report(decl.loc, message, file)  # also on the declaration's line, where some look

    def implicit(self, entry: Entry) -> None:
        decl: ImplicitDecl = entry.decl  # type: ignore[assignment]
        file = entry.ctx.file
        exprs = ExprChecker(self.table, lambda loc, msg: self.report(loc, msg, file), set())
        for arg in decl.call.args:
            exprs.check(arg.value, Scope(params={}), Reads(), arg.loc or decl.loc)
        for loc, message in implicit_problems(self.table, decl):
            self.report(loc or decl.loc, message, file)


def check_decls(table: SymbolTable, implicits: dict[str, list[ImplicitDecl]]) -> list[Diagnostic]:
    """Validate every declaration (bodies included), filling the compiled fields of bodies."""
    return DeclChecker(table, implicits).run()
