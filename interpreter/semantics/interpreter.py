"""The language's semantics: one recursive interpreter over the immutable compiled Program.

Each kind of statement is one branch, and none knows how its effects are
carried out: a handler call, a built-in step, a script and a foreach run
elsewhere are requests to ``Effects`` (effects.py); every state a step
reaches is told to a ``Reporter``.

- ``run_declaration``: a facet's pre-script and andThen blocks, their yields
  merged into the facet's returns;
- ``run_block``: one block — steps, foreach, when or script, each one branch;
- ``run_step``: one step, from its references ready to its handle resolved;
  ``call`` is the call itself — built-in, event facet, composed facet or
  record, one branch each;
- ``run_iterations``: the one place foreach iterations run, by index range.

Paths (step identity, activity ids, mirror ids) are independent of timing:
``b<i>`` is the i-th andThen block, a step adds its name, ``foreach[<i>]`` an
iteration, ``c<i>`` a chosen when case, ``catch`` a catch block and
``script`` a script; e.g. ``b0/l/b0/foreach[2]/g`` is step ``g`` of the third
iteration of the foreach tail of top-level step ``l``.

Each step is its own asyncio task awaiting its references' handles, so a
completing step wakes only the steps that read it. Yields are returned as
ordered lists and merged by source order, never by completion order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

from interpreter.program.evaluate import EvaluationError, evaluate
from interpreter.program.model import Block, Catch, FacetDecl, Program, Script, Step, Yield
from interpreter.program.values import input_problems, return_problem

from .arguments import Arguments
from .effects import BuiltinCall, Effects, FacetCall, Iterations, Reporter, ScriptCall
from .failures import InvalidInput, Skipped, StepFailure
from .limits import oversize, too_large
from .schedule import FOREACH_WINDOW, dataflow, gather_all, windowed
from .scope import Handle, Scope, ScriptWrite, Write, join, merge_into
from .snapshot import Snapshot, StepOutcome

BLOCK_TYPES = {"steps": "AndThen", "foreach": "AndMap", "when": "AndMatch", "script": "AndThen"}
"""Mirror object types of blocks (docs/mirror.md); a foreach iteration is an AndThen inside its AndMap."""

CATCH_FIELDS = ("error", "error_type")
"""What a step that can catch reads as null until it fails."""

CANCELLED_TYPE = "Cancelled"
"""The ``error_type`` a catch block sees when it runs as the cleanup of a cancelled step."""

CANCELLED_MESSAGE = "the run was cancelled"

DEFAULT_VALUE_LIMIT = 64 * 1024 * 1024


@dataclass(frozen=True)
class Rules:
    """What the run's release decided of the language's behaviour, and the run's limits.

    ``cleanup_on_cancel``: a cancelled step runs its catch as cleanup (``error_type == "Cancelled"``), is
    recorded cancelled, and a cancelled block waits for its steps' cleanup; runs started before durable
    control replay without. ``seed_lifecycle``: a step goes in the original runtime's order — an event
    facet's script before its handler (the script's keys in the handler's payload, the handler's returns
    over the script's), yields captured after script blocks, the first of several matching ``when`` cases
    setting a return, and a workflow's outputs checked against its declared returns; runs started before
    0.2.0.dev3 replay without. ``integral_doubles``: a double without a fraction fits Long and Int.
    ``type_checks``: ``strict`` fails a step (or the run) on a value that does not fit its declared type;
    ``warn`` reports it and passes the value on. ``depth_base`` counts the steps enclosing this
    interpretation (a child workflow's foreach), for ``max_nesting``.
    """

    cleanup_on_cancel: bool = True
    seed_lifecycle: bool = True
    integral_doubles: bool = True
    type_checks: str = "strict"
    value_limit: int = DEFAULT_VALUE_LIMIT
    max_nesting: int = 64
    depth_base: int = 0
    foreach_window: int = FOREACH_WINDOW


def _no_steps(name: str) -> Any:
    raise EvaluationError(f"step '{name}' cannot be read in a default value")


def has_body(decl: FacetDecl) -> bool:
    return bool(decl.blocks) or decl.script is not None


def dispatched(decl: FacetDecl) -> bool:
    """Whether a call of ``decl`` goes to a handler: event facets and prompt facets."""
    return decl.kind == "event" or decl.prompt is not None


def object_type(step: Step) -> str:
    return "SchemaInstantiation" if step.call.kind == "schema" else "VariableAssignment"


async def shielded(work: Awaitable[Any]) -> Any:
    """Run ``work`` to its end even if the awaiting task is cancelled again (a cleanup is never cut short)."""
    task = asyncio.ensure_future(work)
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                return task.result()
            continue


def first_case_wins(results: list[list[Write]]) -> list[Write]:
    """The writes of several matching ``when`` cases, in case order, where a return that an earlier case set
    to a value (not a list, which concatenate) keeps it: the first case in source order wins."""
    taken: set[tuple[str, str]] = set()
    out: list[Write] = []
    for writes in results:
        setting: set[tuple[str, str]] = set()
        for write in writes:
            target, fields = write
            kept = {key: value for key, value in fields.items()
                    if isinstance(value, list) or (target, key) not in taken}
            setting.update((target, key) for key, value in kept.items() if not isinstance(value, list))
            if kept:
                out.append(ScriptWrite((target, kept)) if isinstance(write, ScriptWrite) else (target, kept))
        taken |= setting
    return out


class Interpreter:
    def __init__(self, program: Program, effects: Effects, reporter: Reporter, rules: Rules = Rules(),
                 snapshot: Snapshot | None = None):
        self.program = program
        self.effects = effects
        self.report = reporter
        self.rules = rules
        self.arguments = Arguments(program)
        self.snapshot = snapshot  # completed units to restore and to record (runs that continue as new)
        self._declared: dict[tuple[bool, str], tuple[str, ...]] = {}  # (schema?, name) → its declared returns

    # ------------------------------------------------------------------ declarations

    def workflow_params(self, decl: FacetDecl, inputs: dict[str, Any]) -> dict[str, Any]:
        """Inputs with defaults applied; unknown or missing parameters, and values that do not fit their declared
        types (unless ``type_checks`` is ``warn``: then reported), are refused before any step runs."""
        unknown = [name for name in inputs if name not in decl.accepts]
        if unknown:
            raise InvalidInput(f"workflow '{decl.qname}' has no parameter {', '.join(repr(n) for n in unknown)} "
                               f"(parameters: {', '.join(decl.accepts) or 'none'})")
        missing = [name for name in decl.required if name not in inputs]
        if missing:
            raise InvalidInput(f"workflow '{decl.qname}' is missing required parameter "
                               f"{', '.join(repr(n) for n in missing)}")
        try:
            params = self.arguments.complete(decl.qname, dict(inputs))
        except EvaluationError as err:
            raise InvalidInput(f"workflow '{decl.qname}': default value failed: {err}") from err
        problems = input_problems(self.program, decl, params, self.rules.integral_doubles)
        if problems:
            message = f"workflow '{decl.qname}': " + "; ".join(problems)
            if self.rules.type_checks != "warn":
                raise InvalidInput(message)
            self.report.warn("", f"{message} (passed on: type_checks is warn)")
        return params

    async def run_workflow(self, decl: FacetDecl, params: dict[str, Any]) -> dict[str, Any]:
        try:
            returns = await self.run_declaration(decl, params, "", None)
        except StepFailure as failure:
            if decl.catch is None:
                raise
            # The run is the root step: like any caught step it returns error/error_type beside the yields.
            returns, _ = await self.run_catch(decl.catch, decl, None, failure, params, None, "")
            return returns
        except asyncio.CancelledError:
            if self.rules.cleanup_on_cancel and decl.catch is not None:  # the workflow's own catch cleans up last
                await self.clean_up(decl.catch, decl, None, params, None, "", decl.qname)
            raise
        if self.rules.seed_lifecycle:
            self.check_types(return_problem(self.program, decl, returns, self.rules.integral_doubles,
                                            whose="the output"), "", decl.qname)
        return returns

    def check_types(self, problem: str | None, path: str, facet: str) -> None:
        """A value that does not fit its declared type fails the step, or (``type_checks: warn``) is reported."""
        if problem is None:
            return
        if self.rules.type_checks == "warn":
            self.report.warn(path, f"{facet}: {problem} (passed on: type_checks is warn)")
            return
        raise StepFailure(path, facet, problem, "TypeError")

    async def run_declaration(self, decl: FacetDecl, params: dict[str, Any], path: str,
                              caller: Scope | None, initial: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run ``decl``'s pre-script and blocks with ``params`` as ``$.``; return its returns."""
        params = dict(params)
        returns = dict(initial or {})
        if decl.script is not None:
            scripted = await self.run_script(decl.script, params, join(path, "script"), decl.qname)
            params.update(scripted)
            if not decl.blocks:
                # A script without andThen clauses is the whole body: its result keys are the returns.
                merge_into(returns, scripted)
        return await self.run_body(decl, params, path, caller, returns)

    async def run_body(self, decl: FacetDecl, params: dict[str, Any], path: str, caller: Scope | None,
                       returns: dict[str, Any]) -> dict[str, Any]:
        """``decl``'s andThen blocks with ``params`` as ``$.``: their yields merge over ``returns``."""
        scope = Scope(params, path, None, caller, decl.qname, owner=path or None)
        writes = await self.run_blocks(decl.blocks, scope, path)
        self.merge_yields(decl, returns, writes, path)
        return self.return_defaults(decl, returns, params, path)

    async def run_scripted_event(self, decl: FacetDecl, step: Step, args: dict[str, Any], scope: Scope,
                                 path: str) -> dict[str, Any]:
        """An event facet with a script, in the seed's order: the script first, its keys joining the handler's
        payload; the handler's returns over the script's; then the facet's blocks, their yields captured last."""
        assert decl.script is not None
        scripted = await self.run_script(decl.script, args, join(path, "script"), decl.qname)
        payload = {**args, **scripted}
        handled = await self.run_event(decl, step, payload, path)
        if not decl.blocks:
            return self.return_defaults(decl, {**scripted, **handled}, payload, path)
        return await self.run_body(decl, payload, path, scope, handled)

    def captured(self, writes: list[Write]) -> list[Write]:
        """Writes in the order they are captured: script blocks' first, then yields (the seed's StatementCapture)."""
        if not self.rules.seed_lifecycle:
            return writes
        return [w for w in writes if isinstance(w, ScriptWrite)] + [w for w in writes if not isinstance(w, ScriptWrite)]

    def merge_yields(self, decl: FacetDecl, returns: dict[str, Any], writes: list[Write], path: str) -> None:
        """Yields to the declaration or one of its signature mixins write its returns, in source order."""
        targets = {decl.qname, *(m.facet for m in decl.mixins if m.facet)}
        owned: set[str] = set()
        for target, fields in self.captured(writes):
            if target in targets:
                merge_into(returns, fields, owned)
            else:
                self.report.log(path, f"yield to '{target}' has no effect in '{decl.qname}'")

    @staticmethod
    def return_defaults(decl: FacetDecl, returns: dict[str, Any], params: dict[str, Any], path: str) -> dict:
        """Declared returns nobody set take their default expression, evaluated with the parameters."""
        for ret in decl.returns:
            if ret.name not in returns and ret.default is not None:
                try:
                    returns[ret.name] = evaluate(ret.default, params, _no_steps)
                except EvaluationError as err:
                    raise StepFailure(path or decl.qname, decl.qname, f"default of return '{ret.name}': {err}",
                                      "EvaluationError") from err
        return returns

    # ------------------------------------------------------------------ blocks

    async def run_blocks(self, blocks: list[Block], scope: Scope, path: str) -> list[Write]:
        """Sibling andThen blocks start together; yields come back in block order."""
        scopes: list[Scope] = []
        snapshot = self.snapshot
        for index, block in enumerate(blocks):
            inner = scope.child(join(path, f"b{index}"))
            if block.kind == "steps":
                inner.steps = self.handles(block.steps)
                for name in block.exports:
                    self.take_over(inner, scope, name)
                if snapshot is not None and any(index in later.sees for later in blocks):
                    snapshot.seen_blocks.add(id(block))  # its steps' values outlive it: a sibling reads them
                    if inner.path in snapshot.units:  # restored whole, it never runs its steps: siblings need them
                        self.restore_steps(block, inner)
            elif block.kind in ("when", "foreach") and block.sees:
                for seen in block.sees:
                    inner.steps.update(scopes[seen].steps)
            scopes.append(inner)
        results = await gather_all([self.run_block(b, s) for b, s in zip(blocks, scopes, strict=True)])
        return [write for writes in results for write in writes]

    async def run_block(self, block: Block, scope: Scope) -> list[Write]:
        """One block, each kind one branch; reported as a block step."""
        if self.snapshot is not None:
            restored = self.snapshot.unit(scope.path)
            if restored is not None:  # completed in an earlier run of this logical run
                return restored
        if block.kind == "steps":
            work = self.run_steps(block, scope)
        elif block.kind == "foreach":
            work = self.run_foreach(block, scope)
        elif block.kind == "when":
            work = self.run_when(block, scope)
        elif block.kind == "script":
            work = self.run_script_block(block, scope)
        else:
            raise StepFailure(scope.path, "", f"unknown block kind '{block.kind}'", "InterpreterError")
        return await self.tracked(scope.path, BLOCK_TYPES[block.kind], scope.owner, work)

    async def tracked(self, path: str, kind: str, owner: str | None, work: Awaitable[list[Write]],
                      foreach: tuple[str, Any] | None = None) -> list[Write]:
        """Await a block's coroutine, reporting it as a block step (running, then completed or failed).

        ``foreach`` is an iteration's (variable, element), for its record.
        """
        self.report.block(path, kind, "running", parent=owner, foreach=foreach)
        try:
            writes = await work
        except (StepFailure, Skipped) as failure:
            self.report.block(path, kind, "failed", parent=owner, error=str(failure))
            raise
        except asyncio.CancelledError:
            if self.rules.cleanup_on_cancel:
                self.report.block(path, kind, "cancelled", parent=owner, error=CANCELLED_MESSAGE)
            raise
        self.report.block(path, kind, "completed", parent=owner)
        if self.snapshot is not None:
            self.snapshot.unit_done(path, writes)
        return writes

    async def run_steps(self, block: Block, scope: Scope) -> list[Write]:
        """All steps concurrently (each waits for its references), then the block's yields."""
        steps = block.steps
        for step in steps:
            if step.name not in scope.steps:  # a catch block's steps get their handles here
                scope.steps.update(self.handles([step]))
        restored = self.restore_steps(block, scope) if self.snapshot is not None else {}
        # Only what did not complete in an earlier run runs; yields still come back in step order.
        open_steps = [i for i in range(len(steps)) if i not in restored] if restored else range(len(steps))
        ran = await dataflow([steps[i] for i in open_steps] if restored else steps,
                             lambda k: self.run_step(steps[open_steps[k]], scope, scope.steps[steps[open_steps[k]].name],
                                                     block, open_steps[k]),
                             settle_on_cancel=self.rules.cleanup_on_cancel)
        results = ran
        if restored:
            results = [restored.get(i) for i in range(len(steps))]
            for k, i in enumerate(open_steps):
                results[i] = ran[k]
        writes = [write for step_writes in results for write in step_writes]
        for item in block.yields:
            writes.append(await self.run_yield(item, scope))
        return writes

    async def run_yield(self, item: Yield, scope: Scope) -> Write:
        await scope.wait_for(item.refs)
        target = item.target or item.name
        path = join(scope.path, f"yield {item.name}")
        try:
            fields = {arg.name: evaluate(arg.value, scope.params, scope.step_value) for arg in item.args}
        except EvaluationError as err:
            raise StepFailure(path, target, str(err), "EvaluationError") from err
        self.report.block(path, "YieldAssignment", "completed", parent=scope.owner, returns=fields, facet=target)
        return target, fields

    async def run_foreach(self, block: Block, scope: Scope) -> list[Write]:
        await scope.wait_for(block.items_refs)
        where = join(scope.path, "foreach")
        try:
            items = evaluate(block.items, scope.params, scope.step_value) if block.items is not None else []
        except EvaluationError as err:
            raise StepFailure(where, "foreach", str(err), "EvaluationError") from err
        if items is None:
            items = []
        if not isinstance(items, list):
            raise StepFailure(where, "foreach", f"foreach needs a list, got {type(items).__name__}", "TypeError")
        if self.effects.runs_elsewhere(block, len(items)):
            results = await self.effects.iterations(Iterations(block, scope, items))
        else:
            results = await self.run_iterations(block, scope, items, range(len(items)))
        return [write for writes in results for write in writes]

    async def run_iterations(self, block: Block, scope: Scope, items: list[Any], indexes: range) -> list[list[Write]]:
        """The iterations ``indexes`` of a foreach, ``items`` their elements; their yields in index order.

        Iterations start as earlier ones finish, ``Rules.foreach_window`` at once.
        """
        var = block.var or "item"
        offsets = range(len(indexes))
        done: dict[int, list[Write]] = {}
        if self.snapshot is not None:  # iterations completed in an earlier run give their yields at once
            for offset in offsets:
                restored = self.snapshot.unit(f"{scope.path}/foreach[{indexes[offset]}]")
                if restored is not None:
                    done[offset] = restored
        pending = [offset for offset in offsets if offset not in done] if done else offsets

        async def iteration(k: int) -> list[Write]:  # its work made only once it starts (a stopped run starts none)
            offset = pending[k]
            index = indexes[offset]
            inner = scope.child(f"{scope.path}/foreach[{index}]", {**scope.params, var: items[offset]},
                                self.handles(block.steps))
            return await self.tracked(inner.path, "AndThen", scope.owner, self.run_steps(block, inner),
                                      (var, items[offset]))

        ran = await windowed(len(pending), iteration, self.rules.foreach_window,
                             settle_on_cancel=self.rules.cleanup_on_cancel)
        if not done:
            return ran
        results = [done.get(offset) for offset in offsets]
        for k, offset in enumerate(pending):
            results[offset] = ran[k]
        return results

    async def run_when(self, block: Block, scope: Scope) -> list[Write]:
        """Every case whose condition holds runs, concurrently; ``case _`` only if none did."""
        chosen: list[int] = []
        fallback: int | None = None
        for index, case in enumerate(block.cases):
            if case.condition is None:
                fallback = index
                continue
            await scope.wait_for(case.refs)
            try:
                matched = evaluate(case.condition, scope.params, scope.step_value)
            except EvaluationError as err:
                self.report.log(scope.path, f"case {index} condition counts as false: {err}")
                continue
            if matched is True:
                chosen.append(index)
            elif matched is not False:
                self.report.log(scope.path, f"case {index} condition is not a boolean; counts as false")
        if not chosen and fallback is not None:
            chosen = [fallback]
        bodies = [self.run_block(block.cases[index].body, scope.child(f"{scope.path}/c{index}")) for index in chosen]
        results = await gather_all(bodies)
        if self.rules.seed_lifecycle:
            return first_case_wins(results)
        return [write for writes in results for write in writes]

    async def run_script_block(self, block: Block, scope: Scope) -> list[Write]:
        """``andThen script``: its ``result`` keys are returns of the block's target."""
        result = await self.run_script(block.script, scope.params, join(scope.path, "script"), scope.script_target)
        return [ScriptWrite((scope.script_target, result))]

    # ------------------------------------------------------------------ steps

    def restore_steps(self, block: Block, scope: Scope) -> dict[int, list[Write]]:
        """Resolve the handles of ``block``'s steps that completed in an earlier run; their yields by index."""
        assert self.snapshot is not None
        state = self.snapshot.block(scope.path, block)
        if state is None:
            return {}
        restored: dict[int, list[Write]] = {}
        steps = block.steps
        for index in state.completed_indices(len(steps)):
            outcome = state.outcomes.get(index)
            handle = scope.steps[steps[index].name]
            if not handle.settled:
                if outcome is not None and outcome.returns is not None:
                    handle.resolve(outcome.returns)
                else:  # nothing open read it when the run was carried: never read again
                    handle.fail("completed in an earlier run; its value was not carried (nothing open read it)")
                for name, value in ((outcome.reached or {}) if outcome is not None else {}).items():
                    scope.steps[name].resolve(value)
            restored[index] = outcome.writes if outcome is not None else []
        return restored

    def handles(self, steps: list[Step]) -> dict[str, Handle]:
        """A block's handles by step name, and beside a step the handles of the inner steps read from here
        (``Step.reaches``): the inner block takes them over when it starts (``take_over``)."""
        table: dict[str, Handle] = {}
        for step in steps:
            table[step.name] = self.handle(step)
            for name in step.reaches:
                table[name] = Handle(name, ())
        return table

    @staticmethod
    def take_over(inner: Scope, scope: Scope, name: str) -> None:
        """An inner step read from outside its enclosing step's andThen resolves the handle made out there."""
        try:
            shared = scope.find(name)
        except EvaluationError:  # no reader out there in this interpretation (a child workflow's own scope)
            return
        own = inner.steps[name]
        shared.declared, shared.nullable = own.declared, own.nullable
        inner.steps[name] = shared

    @staticmethod
    def unreached(step: Step, scope: Scope) -> None:
        """``step`` completed (or was caught) and an inner step read from outside never ran: its readers skip."""
        for name in step.reaches:
            inner = scope.find(name)
            if not inner.settled:
                inner.fail(f"did not run: '{step.name}' completed without it (its catch handled a failure)")

    def handle(self, step: Step, returns: dict[str, Any] | None = None) -> Handle:
        """A step's handle; a step that can catch reads ``error``/``error_type`` as null until it fails."""
        call = step.call
        schema, name = call.kind == "schema", call.facet or ""
        declared = self._declared.get((schema, name))
        if declared is None:  # once per facet or schema: a long block makes tens of thousands of handles
            if schema:
                record = self.program.schemas.get(name)
                declared = tuple(f.name for f in record.fields) if record is not None else ()
            else:
                target = self.program.facets.get(name)
                declared = tuple(target.return_names or ()) if target is not None else ()
            self._declared[(schema, name)] = declared
        handle = Handle(step.name, declared, CATCH_FIELDS if step.catches else ())
        if returns is not None:
            handle.resolve(returns)
        return handle

    async def run_step(self, step: Step, scope: Scope, handle: Handle, block: Block | None = None,
                       index: int = -1) -> list[Write]:
        """One step from its references ready to its handle resolved; every state it reaches, reported here.

        Returns the yields its tail or catch makes to outer targets.
        """
        path = join(scope.path, step.name)
        name = step.call.facet or step.call.name
        target = self.program.facets.get(step.call.facet or "")
        kind = object_type(step)
        try:
            await scope.wait_for(step.refs)
        except BaseException:
            handle.fail()
            raise
        self.report.step(path, name, "running", statement_id=step.id, object_type=kind, parent=scope.owner,
                         block=scope.path)
        args: dict[str, Any] | None = None
        try:
            try:
                args = self.step_arguments(step, scope, path, name)
                returns = await self.call(step, target, args, scope, path)
                returns, writes = await self.run_tail(step, returns, scope, path)
            except StepFailure as failure:
                catch = step.catch or (target.catch if target is not None else None)
                if catch is None:
                    failure.failed_within(path, name)
                    raise
                self.report.log(path, f"caught {failure}")
                returns, writes = await self.run_catch(catch, target, step, failure, args or {}, scope, path)
                self.report.step(path, name, "caught", statement_id=step.id, object_type=kind, returns=returns,
                                 error=failure.cause, params=args)
            else:
                self.report.step(path, name, "completed", statement_id=step.id, object_type=kind, params=args,
                                 returns=returns)
        except StepFailure as failure:
            scope.fail()
            handle.fail()
            self.report.step(path, name, "failed", statement_id=step.id, error=str(failure), object_type=kind)
            raise
        except asyncio.CancelledError:
            handle.fail()
            if self.rules.cleanup_on_cancel:
                catch = step.catch or (target.catch if target is not None else None)
                if catch is not None:
                    await self.clean_up(catch, target, step, args or {}, scope, path, name)
                self.report.step(path, name, "cancelled", statement_id=step.id, error=CANCELLED_MESSAGE,
                                 object_type=kind)
            raise
        except BaseException:
            handle.fail()
            raise
        handle.resolve(returns)
        if step.reaches:
            self.unreached(step, scope)
        if self.snapshot is not None and block is not None:
            reached = {name: scope.steps[name].returns for name in step.reaches
                       if scope.steps[name].returns is not None} or None
            self.snapshot.step_done(scope.path, index, StepOutcome(returns, writes, reached), path, block)
        return writes

    async def clean_up(self, catch: Catch, decl: FacetDecl | None, step: Step | None, args: dict[str, Any],
                       scope: Scope | None, path: str, name: str) -> None:
        """A cancelled step's catch, run to its end as cleanup with ``error_type == "Cancelled"``.

        Its effects run although the run is being cancelled; a cleanup that
        fails is logged, and the cancellation goes on either way.
        """
        self.report.log(path, "cancelled: running its catch as cleanup")
        cancelled = StepFailure(path, name, CANCELLED_MESSAGE, CANCELLED_TYPE)
        try:
            await shielded(self.run_catch(catch, decl, step, cancelled, args, scope, path))
        except (StepFailure, Skipped) as failure:
            self.report.log(path, f"cleanup failed: {failure}")

    def step_arguments(self, step: Step, scope: Scope, path: str, name: str) -> dict[str, Any]:
        try:
            return self.arguments.for_call(step.call, scope.params, scope.step_value)
        except EvaluationError as err:
            raise StepFailure(path, name, f"arguments: {err}", "EvaluationError") from err

    async def call(self, step: Step, target: FacetDecl | None, args: dict[str, Any], scope: Scope,
                   path: str) -> dict[str, Any]:
        """The call itself, one branch per kind of callee. A step's own tail takes precedence over a body."""
        self.check_nesting(scope, path, step.call.facet or step.call.name)
        own_tail = bool(step.blocks)
        if step.call.kind == "builtin":
            # A step of namespace ffl (a timer, a wait for a signal): the run performs it itself.
            return await self.effects.builtin(BuiltinCall(path, step.call.facet or "", args))
        if target is not None and dispatched(target):
            # An event (or prompt) facet: its handler answers; a body of its own runs after the handler.
            if self.rules.seed_lifecycle and target.script is not None and not own_tail:
                return await self.run_scripted_event(target, step, args, scope, path)
            returns = await self.run_event(target, step, args, path)
            if has_body(target) and not own_tail:
                return await self.run_declaration(target, args, path, scope, initial=returns)
            return self.return_defaults(target, returns, args, path)
        if target is not None and has_body(target) and not own_tail:
            # A composed facet (or a workflow called as a step): its body, with the arguments as ``$.``.
            return await self.run_declaration(target, args, path, scope)
        # A schema instance, or a facet with neither handler nor body: it holds its arguments.
        returns = dict(args)
        return self.return_defaults(target, returns, args, path) if target is not None else returns

    def check_nesting(self, scope: Scope, path: str, facet: str) -> None:
        """Fail a step nested inside more than ``max_nesting`` steps: recursion that the data never ends."""
        limit = self.rules.max_nesting
        if self.rules.depth_base + scope.nesting() >= limit:
            raise StepFailure(path, facet, f"steps are nested more than {limit} deep (runaway recursion?); "
                              "raise max_nesting_depth in the runtime configuration if this is intended",
                              "NestingTooDeep")

    async def run_tail(self, step: Step, returns: dict[str, Any], scope: Scope,
                       path: str) -> tuple[dict[str, Any], list[Write]]:
        """The step's own andThen blocks: they see the step's returns; yields to its facet complete them."""
        if not step.blocks:
            return returns, []
        facet = step.call.facet or step.call.name
        tail = scope.child(path, steps={step.name: self.handle(step, returns)}, script_target=facet, owner=path)
        # run_blocks gives each tail block a fresh child scope of ``tail``, which holds only the step
        return self.split(await self.run_blocks(step.blocks, tail, path), facet, dict(returns))

    def split(self, writes: list[Write], facet: str, returns: dict[str, Any]) -> tuple[dict, list[Write]]:
        """Apply yields to the step's facet; pass the rest to the enclosing declaration."""
        outer: list[Write] = []
        owned: set[str] = set()
        for target, fields in self.captured(writes):
            if target == facet:
                merge_into(returns, fields, owned)
            else:
                outer.append((target, fields))
        return returns, outer

    async def run_catch(self, catch: Catch, decl: FacetDecl | None, step: Step | None, failure: StepFailure,
                        args: dict[str, Any], scope: Scope | None, path: str) -> tuple[dict, list[Write]]:
        """A failed step's returns become ``error``/``error_type``, then its catch block runs.

        A step's own catch runs in the step's scope and sees the step; a
        declaration's catch runs in the declaration's context (``$.`` = its
        arguments) and its yields to the declaration write the returns.
        """
        returns: dict[str, Any] = {"error": failure.cause, "error_type": failure.error_type}
        catch_path = join(path, "catch")
        if step is not None and scope is not None and catch is step.catch:
            facet = step.call.facet or step.call.name
            holder = scope.child(path, steps={step.name: self.handle(step, returns)}, owner=path,
                                 script_target=facet)
            writes = await self.run_block(catch.block, holder.child(catch_path))
            return self.split(writes, facet, returns)
        qname = decl.qname if decl is not None else ""
        inner = Scope({**args, **returns}, catch_path, None, scope, qname, owner=path or None)
        writes = await self.run_block(catch.block, inner)
        targets = {qname, *(m.facet for m in decl.mixins if m.facet)} if decl is not None else set()
        owned: set[str] = set()
        for target, fields in self.captured(writes):
            if target in targets:
                merge_into(returns, fields, owned)
        return returns, []

    # ------------------------------------------------------------------ effects

    async def run_event(self, decl: FacetDecl, step: Step, args: dict[str, Any], path: str) -> dict[str, Any]:
        """An event facet's handler, asked through the effects; its answer checked against the declared returns."""
        facet = decl.qname
        size = oversize(args, self.rules.value_limit)
        if size is not None:
            raise StepFailure(path, facet, too_large("arguments", size, self.rules.value_limit), "PayloadTooLarge")
        result = await self.effects.call_facet(FacetCall(path, decl, step, args))
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise StepFailure(path, facet, f"handler returned {type(result).__name__}, not a record", "TypeError")
        self.check_types(return_problem(self.program, decl, result, self.rules.integral_doubles), path, facet)
        return result

    async def run_script(self, script: Script | None, params: dict[str, Any], path: str, owner: str) -> dict[str, Any]:
        """A script, asked through the effects (never run in the interpreter itself)."""
        if script is None:
            return {}
        size = oversize(params, self.rules.value_limit)
        if size is not None:
            raise StepFailure(path, owner or "script", too_large("script parameters", size, self.rules.value_limit),
                              "PayloadTooLarge")
        result = await self.effects.script(ScriptCall(path, script, params, owner))
        return result if isinstance(result, dict) else {}
