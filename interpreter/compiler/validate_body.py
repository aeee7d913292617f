"""Validation and compilation of declaration bodies: scopes, steps, yields, when/foreach/catch.

Walking a body once both reports scope errors and fills the compiled fields
(``Step.id/refs/params``, ``Yield.refs/params``, ``Case.refs/params``,
``Block.items_refs/items_params/sees``), since both need the same scopes.
"""

from __future__ import annotations

from ..program.model import Block, FacetDecl, ImplicitDecl, Loc, Step
from .calls import builtin_problems, call_problems, yield_problems
from .diagnostics import Diagnostic
from .exprs import ExprChecker, show_type
from .fields import BOOLEAN, JSON, STRING
from .scope import Layer, Reads, Scope
from .symbols import SymbolTable


def step_names(blocks: list[Block]) -> set[str]:
    """Every step name anywhere in ``blocks`` (tails, cases and catches included)."""
    names: set[str] = set()
    for block in blocks:
        for step in block.steps:
            names.add(step.name)
            names |= step_names(step.blocks)
            if step.catch is not None:
                names |= step_names([step.catch.block])
        names |= step_names([case.body for case in block.cases])
    return names


class BodyChecker:
    def __init__(self, table: SymbolTable, implicits: dict[str, list[ImplicitDecl]], file: str,
                 decl_steps: set[str], out: list[Diagnostic]):
        self.table = table
        self.implicits = implicits
        self.file = file
        self.out = out
        self.exprs = ExprChecker(table, self.report, decl_steps)

    def report(self, loc: Loc | None, message: str) -> None:
        self.out.append(Diagnostic.at(loc, message, self.file))

    def warn(self, loc: Loc | None, message: str) -> None:
        """Where a program depends on a difference from the original runtime (docs/migrating.md)."""
        self.out.append(Diagnostic.at(loc, message, self.file, severity="warning"))

    # ---------------------------------------------------------------- blocks

    def blocks(self, blocks: list[Block], scope: Scope, prefix: str) -> None:
        """Sibling ``andThen`` blocks: separate scopes, but a ``when`` or a ``foreach`` sees earlier steps blocks."""
        regular: list[tuple[int, list[Step]]] = []
        for index, block in enumerate(blocks):
            sink: set[int] = set()
            inner = scope
            if block.kind in ("when", "foreach") and regular:
                # earlier steps blocks go under the enclosing layers: enclosing steps win
                seen = [Layer.of(steps, len(steps), sink, earlier) for earlier, steps in reversed(regular)]
                inner = scope.evolve(layers=(*seen, *scope.layers))
            self.block(block, inner, f"{prefix}/b{index}")
            block.sees = sorted(sink)
            if block.kind == "steps":
                regular.append((index, block.steps))

    def block(self, block: Block, scope: Scope, bid: str, fallback: Loc | None = None) -> None:
        if block.kind == "steps":
            self.steps(block, scope, bid)
        elif block.kind == "foreach":
            reads = Reads()
            if block.items is not None:
                items = self.exprs.check_field(block, "items", scope, reads, block.loc)
                if items == STRING:
                    self.warn(block.loc, "foreach over a String: the original runtime iterated its characters; "
                              "here the step fails (a foreach needs a list)")
            block.items_refs, block.items_params = reads.refs, reads.params
            self.steps(block, scope.with_param(block.var or "").with_loop_var(block.var or "", block.loc), bid)
        elif block.kind == "when":
            self.cases(block, scope, bid, fallback)
        elif block.kind == "script":
            if block.script is None or not block.script.code.strip():
                self.report((block.script.loc if block.script else None) or block.loc or fallback, "empty script")

    def cases(self, block: Block, scope: Scope, bid: str, fallback: Loc | None) -> None:
        defaults = [i for i, case in enumerate(block.cases) if case.condition is None]
        last = len(block.cases) - 1
        if defaults != [last]:
            # Reported at the when itself (where a missing default can only be), and below at
            # each misplaced or extra ``case _``, so either place points at the problem.
            first = block.cases[0].loc if block.cases else None
            self.report(block.loc or fallback or first, "when block needs exactly one default 'case _', as its last case")
        for count, index in enumerate(defaults):
            where = block.cases[index].loc or block.loc
            if count > 0:
                self.report(where, "when block has more than one 'case _'")
            elif index != last:
                self.report(where, "'case _' must be the last case of a when block")
        for index, case in enumerate(block.cases):
            reads = Reads()
            if case.condition is not None:
                found = self.exprs.check_field(case, "condition", scope, reads, case.loc)
                if found is not None and found not in (BOOLEAN, JSON):
                    self.report(case.condition.loc or case.loc,
                                f"when case condition must be Boolean, got {show_type(found)}")
            case.refs, case.params = reads.refs, reads.params
            self.block(case.body, scope, f"{bid}/c{index}")

    # ---------------------------------------------------------------- steps and yields

    def steps(self, block: Block, scope: Scope, bid: str) -> None:
        steps = block.steps
        seen: set[str] = set()
        for step in steps:
            outer = scope.lookup(step.name)
            if step.name in seen:
                self.report(step.loc, f"duplicate step '{step.name}' in one block")
            elif outer is not None and outer.sink is None:
                self.report(step.loc, f"duplicate step '{step.name}': it shadows a step of an enclosing block")
            seen.add(step.name)
        layer = Layer.of(steps, 0)
        for i, step in enumerate(steps):
            step.id = f"{bid}/s{i}"
            self.step(step, scope.with_layer(Layer(layer.steps, i)).evolve(current=step.name))
            targets = (*scope.yield_targets, step.call.facet) if step.call.facet else scope.yield_targets
            tail = scope.with_layer(Layer(layer.steps, i + 1)).evolve(current=None, yield_targets=targets,
                                                                      enclosing=(*scope.enclosing, step.id))
            self.blocks(step.blocks, tail, step.id)
            if step.catch is not None:
                self.block(step.catch.block, tail, f"{step.id}/catch", step.catch.loc)
        after = scope.with_layer(Layer(layer.steps, len(steps))).evolve(current=None)
        targets: set[str] = set()
        for item in block.yields:
            reads = Reads()
            types = {arg.name: self.exprs.check_field(arg, "value", after, reads, arg.loc or item.loc)
                     for arg in item.args}
            item.refs, item.params = reads.refs, reads.params
            if item.target is None:
                continue
            allowed = list(dict.fromkeys(after.yield_targets))
            if item.target not in allowed:
                self.report(item.loc, f"cannot yield to '{item.name}' here: allowed targets are "
                            + ", ".join(f"'{t}'" for t in allowed))
            if item.target in targets:
                self.report(item.loc, f"duplicate yield: two yields to '{item.name}' in one block")
            targets.add(item.target)
            for loc, message in yield_problems(self.table, item, types):
                self.report(loc, message)

    def step(self, step: Step, scope: Scope) -> None:
        reads = Reads()
        types = {}
        for arg in step.call.args:
            types[arg.name] = self.exprs.check_field(arg, "value", scope, reads, arg.loc or step.call.loc)
        if step.call.kind == "builtin":
            for loc, message in builtin_problems(self.table, step.call, types):
                self.report(loc or step.loc, message)
        for mixin in step.call.mixins:
            for arg in mixin.args:
                self.exprs.check_field(arg, "value", scope, reads, arg.loc or mixin.loc)
        step.refs, step.params = reads.refs, reads.params
        for loc, message in call_problems(self.table, step.call):
            self.report(loc or step.loc, message)


def check_body(table: SymbolTable, implicits: dict[str, list[ImplicitDecl]], decl: FacetDecl,
               scope: Scope, file: str, out: list[Diagnostic]) -> None:
    """Check and compile the ``andThen`` blocks and catch of one declaration."""
    names = step_names(decl.blocks) | (step_names([decl.catch.block]) if decl.catch else set())
    checker = BodyChecker(table, implicits, file, names, out)
    checker.blocks(decl.blocks, scope, decl.qname)
    if decl.catch is not None:
        # A declaration's catch reads the failure as `$.error` and `$.error_type`.
        caught = scope.with_param("error", STRING).with_param("error_type", STRING)
        checker.block(decl.catch.block, caught, f"{decl.qname}/catch", decl.catch.loc)
