"""Name resolution: fill the model's resolved names so the workflow never looks anything up.

Sets ``Call.facet/kind/queue``, ``MixinCall.facet``, ``Yield.target``,
``FacetDecl.queue`` and schema ``TypeRef.name`` (qualified), reporting names
that are unknown, ambiguous or of the wrong kind. Works in place on the
symbol table's copies.

Two constructs of the original runtime's programs resolve with a warning: a
short name neither local nor visible through ``uses`` but declared in exactly
one namespace, and a mixin naming a facet declared nowhere (dropped from the
compiled program, so it contributes nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..program.builtins import is_builtin
from ..program.model import (
    BUILTIN_TYPES,
    Block,
    Call,
    FacetDecl,
    ImplicitDecl,
    MixinCall,
    Param,
    SchemaDecl,
    Step,
    TypeRef,
    Yield,
)
from .diagnostics import Diagnostic
from .suggest import did_you_mean
from .symbols import Context, Declaration, Lookup, SymbolTable


def queue_of(namespace: str) -> str:
    """Task queue of a namespace: its first segment, ``default`` at top level."""
    return namespace.split(".", 1)[0] if namespace else "default"


def _describe(lookup: Lookup) -> str:
    return " and ".join(f"'{c}'" for c in lookup.candidates)


def _callable(decl: Declaration) -> bool:
    return isinstance(decl, (FacetDecl, SchemaDecl))


def _is_facet(decl: Declaration) -> bool:
    return isinstance(decl, FacetDecl)


def _is_schema(decl: Declaration) -> bool:
    return isinstance(decl, SchemaDecl)


def _use_hint(qname: str, ctx: Context) -> str:
    """How to make ``qname`` visible where ``ctx`` is: a use line, or (at top level) its qualified name."""
    namespace = qname.rsplit(".", 1)[0]
    if ctx.namespace:
        return f"add 'use {namespace}' to namespace {ctx.namespace}"
    return f"write its qualified name '{qname}'"


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


class Resolver:
    def __init__(self, table: SymbolTable):
        self.table = table
        self.diagnostics: list[Diagnostic] = []
        self._pools: dict[tuple[Callable, Context], tuple[list[str], list[str]]] = {}  # only once an error is found

    def run(self) -> list[Diagnostic]:
        for use, ctx in self.table.uses:
            if not self.table.namespace_exists(use.name):
                hint = did_you_mean(use.name, self.table.namespace_names() - {ctx.namespace})
                self._error(use.loc, f"uses unknown namespace '{use.name}'{hint}", ctx)
        for entry in self.table.entries:
            decl, ctx = entry.decl, entry.ctx
            if isinstance(decl, FacetDecl):
                self._facet(decl, ctx)
            elif isinstance(decl, SchemaDecl):
                self._params(decl.fields, ctx)
            elif isinstance(decl, ImplicitDecl):
                self._call(decl.call, ctx)
        return self.diagnostics

    def _error(self, loc, message: str, ctx: Context) -> None:
        self.diagnostics.append(Diagnostic.at(loc, message, ctx.file))

    def _warning(self, loc, message: str, ctx: Context) -> None:
        self.diagnostics.append(Diagnostic.at(loc, message, ctx.file, severity="warning"))

    def _as_written(self, qnames: Iterable[str], ctx: Context) -> list[str]:
        """The declarations as ``ctx`` may write them: by short name where visible, else qualified.

        A qualified name is left out when its short name is visible here as
        another declaration: that one is the likelier meaning of a misspelling.
        """
        written = [_short(q) if self.table.visible(_short(q), ctx).qname == q else q for q in qnames]
        visible = {name for name in written if "." not in name}
        return [name for name in written if "." not in name or _short(name) not in visible]

    def _near(self, name: str, ctx: Context, qnames: list[str], written: list[str] | None = None,
              extra: Iterable[str] = ()) -> str:
        """A did-you-mean suffix for ``name`` among the declarations ``qnames`` (and ``extra`` names).

        A qualified name is compared with qualified names; a short one with
        short names, each declaration offered as ``ctx`` may write it.
        """
        if "." in name:  # a built-in only for a name written in its namespace (not 'n.Timout' for ffl.Timeout)
            return did_you_mean(name, [q for q in qnames if is_builtin(name) or not is_builtin(q)])
        offered = written if written is not None else self._as_written(qnames, ctx)
        return did_you_mean(name, [*offered, *extra], key=_short)

    def _near_declared(self, name: str, ctx: Context, accept: Callable[[Declaration], bool],
                       extra: Iterable[str] = ()) -> str:
        """``_near`` among every declaration ``accept`` takes; the candidates are gathered once per place."""
        pool = self._pools.get((accept, ctx))
        if pool is None:
            qnames = [q for q, e in self.table.by_qname.items() if accept(e.decl)]
            pool = self._pools[(accept, ctx)] = (qnames, self._as_written(qnames, ctx))
        return self._near(name, ctx, pool[0], pool[1], extra)

    def _lookup(self, name: str, loc, ctx: Context, what: str, accept) -> Lookup:
        """Look ``name`` up; report a program-wide match (warning) or several of them (error)."""
        found = self.table.lookup(name, ctx, accept)
        if found.foreign and found.qname is not None:
            self._warning(loc, f"{what} '{name}' is not visible here; using '{found.qname}', the only declaration "
                               f"of that name ({_use_hint(found.qname, ctx)})", ctx)  # fmt: skip
        elif found.foreign:
            self._error(loc, f"unknown {what} '{name}' here: declared in several namespaces, as {_describe(found)} "
                             "(add a 'use' line or write the qualified name)", ctx)  # fmt: skip
        return found

    def _facet(self, decl: FacetDecl, ctx: Context) -> None:
        decl.queue = queue_of(decl.namespace)
        self._params(decl.params, ctx)
        self._params(decl.returns, ctx)
        decl.mixins = [mixin for mixin in decl.mixins if self._mixin(mixin, ctx)]
        targets = (decl.qname, *[mixin.facet for mixin in decl.mixins if mixin.facet])
        self._blocks(decl.blocks, ctx, targets)
        if decl.catch is not None:
            self._block(decl.catch.block, ctx, targets)

    def _params(self, params: list[Param], ctx: Context) -> None:
        for param in params:
            self._type(param.type, ctx)

    def _type(self, ref: TypeRef, ctx: Context) -> None:
        if ref.name in BUILTIN_TYPES:
            return
        qname = self._named(ref.name, ref.loc, ctx, SchemaDecl, "type",
                            lambda: self._near_declared(ref.name, ctx, _is_schema, BUILTIN_TYPES))
        if qname is not None:
            ref.name = qname

    def _named(self, name: str, loc, ctx: Context, kind: type, what: str, near: Callable[[], str]) -> str | None:
        """The qualified name ``name`` resolves to when it is a declaration of ``kind``; else report.

        ``near`` gives the did-you-mean suffix of an unknown name.
        """
        found = self._lookup(name, loc, ctx, what, lambda decl: isinstance(decl, kind))
        if found.foreign and found.qname is None:
            return None  # several candidates, reported by _lookup
        if found.ambiguous:
            self._error(loc, f"ambiguous {what} '{name}': visible as {_describe(found)}", ctx)
        elif found.qname is None or not isinstance(self.table.by_qname[found.qname].decl, kind):
            self._error(loc, f"unknown {what} '{name}'{near()}", ctx)
        else:
            return found.qname
        return None

    def _facet_target(self, name: str, loc, ctx: Context, what: str, accept=_callable) -> str | None:
        """Look up a callable name; report and return None unless it names a facet or schema."""
        found = self._lookup(name, loc, ctx, what, accept)
        if found.foreign and found.qname is None:
            return None  # several candidates, reported by _lookup
        if found.ambiguous:
            self._error(loc, f"ambiguous {what} '{name}': visible as {_describe(found)}", ctx)
            return None
        if found.qname is None:
            self._error(loc, f"unknown {what} '{name}'{self._near_declared(name, ctx, accept)}", ctx)
            return None
        if isinstance(self.table.by_qname[found.qname].decl, ImplicitDecl):
            self._error(loc, f"'{name}' is an implicit, not a facet", ctx)
            return None
        return found.qname

    def _call(self, call: Call, ctx: Context) -> None:
        qname = self._facet_target(call.name, call.loc, ctx, "facet")
        if qname is not None:
            target = self.table.by_qname[qname].decl
            call.facet = qname
            if isinstance(target, SchemaDecl):
                call.kind = "schema"
            elif is_builtin(qname):
                call.kind = "builtin"  # performed by the workflow itself (program/builtins.py), never a handler
            else:
                call.kind = target.kind
                if target.kind == "event":
                    call.queue = queue_of(target.namespace)
        call.mixins = [mixin for mixin in call.mixins if self._mixin(mixin, ctx)]

    def _mixin(self, mixin: MixinCall, ctx: Context) -> bool:
        """Resolve a mixin; False when it names a facet declared nowhere (it is then dropped)."""
        if self._declared_nowhere(mixin.name):
            near = self._near_declared(mixin.name, ctx, _is_facet)
            self._warning(mixin.loc, f"mixin '{mixin.name}' names a facet declared nowhere in the program: it "
                                     f"contributes nothing (declare the facet to pass its arguments){near}", ctx)  # fmt: skip
            return False
        qname = self._facet_target(mixin.name, mixin.loc, ctx, "mixin facet", _is_facet)
        if qname is None:
            return True
        if isinstance(self.table.by_qname[qname].decl, SchemaDecl):
            self._error(mixin.loc, f"mixin '{mixin.name}' is a schema, not a facet", ctx)
            return True
        mixin.facet = qname
        return True

    def _declared_nowhere(self, name: str) -> bool:
        """A short name that no declaration of any kind has (a wrong qualified name stays an error)."""
        return "." not in name and name not in self.table.by_short

    def _blocks(self, blocks: list[Block], ctx: Context, targets: tuple[str, ...]) -> None:
        for block in blocks:
            self._block(block, ctx, targets)

    def _block(self, block: Block, ctx: Context, targets: tuple[str, ...]) -> None:
        """Resolve a block; ``targets`` are the facets its yields may name (offered for a misspelt one)."""
        for step in block.steps:
            self._step(step, ctx, targets)
        for item in block.yields:
            self._yield(item, ctx, targets)
        for case in block.cases:
            self._block(case.body, ctx, targets)

    def _step(self, step: Step, ctx: Context, targets: tuple[str, ...]) -> None:
        self._call(step.call, ctx)
        if not step.blocks and step.catch is None:
            return
        tail = (*targets, step.call.facet) if step.call.facet else targets
        self._blocks(step.blocks, ctx, tail)
        if step.catch is not None:
            self._block(step.catch.block, ctx, tail)

    def _yield(self, item: Yield, ctx: Context, targets: tuple[str, ...]) -> None:
        qname = self._named(item.name, item.loc, ctx, FacetDecl, "yield target",
                            lambda: self._near(item.name, ctx, list(targets)))
        if qname is not None:
            item.target = qname


def resolve(table: SymbolTable) -> list[Diagnostic]:
    """Resolve every name in the table's declarations in place; return the problems found."""
    return Resolver(table).run()
