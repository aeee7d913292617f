"""The interpreter: recursive coroutines over the immutable Program, one per kind of statement.

- ``run_declaration``: a facet's pre-script and andThen blocks, their yields
  merged into the facet's returns;
- ``run_block``: one block — steps, foreach, when or script, each one branch;
- ``run_step``: one step, from its references ready to its handle resolved:
  its arguments, the call (``call``: handler, body or record, one branch
  each), its own tail, its catch, and every state the step reports;
- ``run_event``: the one place an event facet's handler is called (an
  activity named after the facet, admitted by the run's ``Admission``);
- ``run_iterations``: the one place foreach iterations run, by index range.

Prompt facets (``prompt { ... }``) are dispatched exactly like event facets:
the activity type is the facet's qualified name, the payload its arguments,
so a handler registered under that name (e.g. one calling a language model)
answers it. Declared returns a handler or body leaves unset take their
default expression when they have one. What the compiler decided (accepted
and required parameters, declared returns, whether a step catches, queues)
is read from the program, never derived here.

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
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.constants import RUN_IDENTITY_KEY, RUN_SCRIPT_ACTIVITY
    from interpreter.program.display import activity_summary, script_summary, short_name, step_text
    from interpreter.program.evaluate import EvaluationError, evaluate
    from interpreter.program.model import Block, Call, Catch, FacetDecl, Program, Script, Step, Yield
    from interpreter.program.scripts import ScriptRequest

from .admission import Admission
from .arguments import Arguments
from .boundaries import check_nesting, check_returns, timeout_message
from .builtins import Builtins
from .cancellation import CANCELLED_MESSAGE, CANCELLED_TYPE, cancelled_activity, shielded
from .children import Children
from .continuation import Scale, failure_entry, result_entry
from .limits import PAYLOAD_LIMIT, oversize, too_large
from .local import as_activity_error, local_options, runs_locally
from .options import ActivityOptions, dispatched
from .schedule import FOREACH_WINDOW, dataflow, windowed
from .state import Handle, Scope, Skipped, StepFailure, Write, activity_failure, gather_all, join, merge_into
from .tracker import Tracker

BLOCK_TYPES = {"steps": "AndThen", "foreach": "AndMap", "when": "AndMatch", "script": "AndThen"}
"""Mirror object types of blocks (docs/mirror.md); a foreach iteration is an AndThen inside its AndMap."""


def _no_steps(name: str) -> Any:
    raise EvaluationError(f"step '{name}' cannot be read in a default value")


def has_body(decl: FacetDecl) -> bool:
    return bool(decl.blocks) or decl.script is not None


def object_type(step: Step) -> str:
    return "SchemaInstantiation" if step.call.kind == "schema" else "VariableAssignment"


class Interpreter:
    def __init__(self, program: Program, config: RuntimeConfig, tracker: Tracker, options: ActivityOptions,
                 builtins: Builtins | None = None, *, scale: Scale | None = None, seq_base: int = 0):
        """``builtins`` performs the ffl steps; given only to runs under CONTROL_PATCH (``control``), which
        also clean up a cancelled run (cancellation.py).

        ``scale`` (runs under SCALE_PATCH): the memo of a continued run, child workflows for large foreach
        blocks and local activities; without it the run keeps to one history as the releases before did."""
        self.builtins = builtins
        self.control = builtins is not None
        self.scale = scale
        self.children = Children(self, scale, seq_base) if scale is not None else None
        self.depth_base = 0  # steps enclosing this history's interpretation (a child's foreach)
        self.value_limit = config.max_value_bytes if scale is not None else PAYLOAD_LIMIT  # by reference since the patch
        self.program = program
        self.config = config
        self.tracker = tracker
        self.options = options
        self.arguments = Arguments(program)
        self.admission = Admission.from_config(config, options.tick)
        info = workflow.info()
        # A child or a continued run's mirrored handlers report under the logical run's identity (dispatch.py).
        self.identity = [tracker.workflow_id, tracker.run_id] if scale is not None and config.mirror and (
            tracker.workflow_id, tracker.run_id) != (info.workflow_id, info.run_id) else None
        if scale is not None:  # scale hook: hold new work past the history limit, know what is in flight
            self.admission.hold = scale.holds
            scale.in_flight = lambda: self.admission.in_flight
            scale.admission_waiting = self.admission.waiting
            tracker.quiet = scale.memo.restored
        self.root = ""  # the workflow's short name, leading readable paths in activity summaries
        self.step_texts: dict[str, str] = {}  # statement id → the step as written, computed once

    # ------------------------------------------------------------------ declarations

    def workflow_params(self, decl: FacetDecl, inputs: dict[str, Any]) -> dict[str, Any]:
        """Inputs with defaults applied; unknown or missing parameters fail the run at once."""
        unknown = [name for name in inputs if name not in decl.accepts]
        if unknown:
            raise ApplicationError(
                f"workflow '{decl.qname}' has no parameter {', '.join(repr(n) for n in unknown)} "
                f"(parameters: {', '.join(decl.accepts) or 'none'})", type="InvalidParameters", non_retryable=True)
        missing = [name for name in decl.required if name not in inputs]
        if missing:
            raise ApplicationError(
                f"workflow '{decl.qname}' is missing required parameter {', '.join(repr(n) for n in missing)}",
                type="InvalidParameters", non_retryable=True)
        try:
            return self.arguments.complete(decl.qname, dict(inputs))
        except EvaluationError as err:
            raise ApplicationError(f"workflow '{decl.qname}': default value failed: {err}",
                                   type="InvalidParameters", non_retryable=True) from err

    async def run_workflow(self, decl: FacetDecl, params: dict[str, Any]) -> dict[str, Any]:
        self.root = short_name(decl.qname)
        try:
            return await self.run_declaration(decl, params, "", None)
        except StepFailure as failure:
            if decl.catch is None:
                raise
            # The run is the root step: like any caught step it returns error/error_type beside the yields.
            returns, _ = await self.run_catch(decl.catch, decl, None, failure, params, None, "")
            return returns
        except asyncio.CancelledError:
            if self.control and decl.catch is not None:  # the workflow's own catch cleans up last
                await self.clean_up(decl.catch, decl, None, params, None, "", decl.qname)
            raise

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
        scope = Scope(params, path, None, caller, decl.qname, owner=path or None)
        writes = await self.run_blocks(decl.blocks, scope, path)
        self.merge_yields(decl, returns, writes, path)
        return self.return_defaults(decl, returns, params, path)

    def merge_yields(self, decl: FacetDecl, returns: dict[str, Any], writes: list[Write], path: str) -> None:
        """Yields to the declaration or one of its signature mixins write its returns, in source order."""
        targets = {decl.qname, *(m.facet for m in decl.mixins if m.facet)}
        owned: set[str] = set()
        for target, fields in writes:
            if target in targets:
                merge_into(returns, fields, owned)
            else:
                self.tracker.log(path, f"yield to '{target}' has no effect in '{decl.qname}'")

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
        for index, block in enumerate(blocks):
            inner = scope.child(join(path, f"b{index}"))
            if block.kind == "steps":
                inner.steps = self.handles(block.steps)
            elif block.kind == "when" and block.sees:
                for seen in block.sees:
                    inner.steps.update(scopes[seen].steps)
            scopes.append(inner)
        results = await gather_all([self.run_block(b, s) for b, s in zip(blocks, scopes, strict=True)])
        return [write for writes in results for write in writes]

    async def run_block(self, block: Block, scope: Scope) -> list[Write]:
        """One block, each kind one branch; mirrored as a block step."""
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
        """Await a block's coroutine, mirroring it as a block step (running, then completed or failed).

        ``foreach`` is an iteration's (variable, element), for its mirror record.
        """
        self.tracker.block(path, kind, "running", parent=owner, foreach=foreach)
        try:
            writes = await work
        except (StepFailure, Skipped) as failure:
            self.tracker.block(path, kind, "failed", parent=owner, error=str(failure))
            raise
        except asyncio.CancelledError:
            if self.control:
                self.tracker.block(path, kind, "cancelled", parent=owner, error=CANCELLED_MESSAGE)
            raise
        self.tracker.block(path, kind, "completed", parent=owner)
        return writes

    async def run_steps(self, block: Block, scope: Scope) -> list[Write]:
        """All steps concurrently (each waits for its references), then the block's yields."""
        steps = block.steps
        for step in steps:
            if step.name not in scope.steps:  # a catch block's steps get their handles here
                scope.steps[step.name] = self.handle(step)
        results = await dataflow(steps, lambda i: self.run_step(steps[i], scope, scope.steps[steps[i].name]),
                                 settle=self.control)
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
        self.tracker.block(path, "YieldAssignment", "completed", parent=scope.owner, returns=fields, facet=target)
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
        if self.children is not None and self.children.wanted(block, len(items)):  # scale hook: child workflows
            results = await self.children.run(block, scope, items)
        else:
            results = await self.run_iterations(block, scope, items, range(len(items)))
        return [write for writes in results for write in writes]

    async def run_iterations(self, block: Block, scope: Scope, items: list[Any], indexes: range) -> list[list[Write]]:
        """The iterations ``indexes`` of a foreach, ``items`` their elements; their yields in index order.

        Iterations start as earlier ones finish, enough at once to fill the
        run's activity limit; the activities themselves are admitted by
        ``self.admission``.
        """
        var = block.var or "item"

        def iteration(offset: int):
            index = indexes[offset]
            inner = scope.child(f"{scope.path}/foreach[{index}]", {**scope.params, var: items[offset]},
                                self.handles(block.steps))
            return self.tracked(inner.path, "AndThen", scope.owner, self.run_steps(block, inner), (var, items[offset]))

        return await windowed(len(indexes), iteration, max(FOREACH_WINDOW, self.admission.limit),
                              settle=self.control)

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
                self.tracker.log(scope.path, f"case {index} condition counts as false: {err}")
                continue
            if matched is True:
                chosen.append(index)
            elif matched is not False:
                self.tracker.log(scope.path, f"case {index} condition is not a boolean; counts as false")
        if not chosen and fallback is not None:
            chosen = [fallback]
        bodies = [self.run_block(block.cases[index].body, scope.child(f"{scope.path}/c{index}")) for index in chosen]
        results = await gather_all(bodies)
        return [write for writes in results for write in writes]

    async def run_script_block(self, block: Block, scope: Scope) -> list[Write]:
        """``andThen script``: its ``result`` keys are returns of the block's target."""
        result = await self.run_script(block.script, scope.params, join(scope.path, "script"), scope.script_target)
        return [(scope.script_target, result)]

    # ------------------------------------------------------------------ steps

    def handles(self, steps: list[Step]) -> dict[str, Handle]:
        return {s.name: self.handle(s) for s in steps}

    def handle(self, step: Step, returns: dict[str, Any] | None = None) -> Handle:
        """A step's handle; a step that can catch reads ``error``/``error_type`` as null until it fails."""
        call = step.call
        if call.kind == "schema":
            record = self.program.schemas.get(call.facet or "")
            declared = tuple(f.name for f in record.fields) if record is not None else ()
        else:
            target = self.program.facets.get(call.facet or "")
            declared = tuple(target.return_names) if target is not None else ()
        handle = Handle(step.name, declared, ("error", "error_type") if step.catches else ())
        if returns is not None:
            handle.resolve(returns)
        return handle

    async def run_step(self, step: Step, scope: Scope, handle: Handle) -> list[Write]:
        """One step from its references ready to its handle resolved; every state it reports, reported here.

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
        self.tracker.step(path, name, "running", statement_id=step.id, object_type=kind, parent=scope.owner,
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
                self.tracker.log(path, f"caught {failure}")
                returns, writes = await self.run_catch(catch, target, step, failure, args or {}, scope, path)
                self.tracker.step(path, name, "caught", statement_id=step.id, object_type=kind, returns=returns,
                                  error=failure.cause, params=args)
            else:
                self.tracker.step(path, name, "completed", statement_id=step.id, object_type=kind, params=args,
                                  returns=returns)
        except StepFailure as failure:
            scope.fail()
            handle.fail()
            self.tracker.step(path, name, "failed", statement_id=step.id, error=str(failure), object_type=kind)
            raise
        except asyncio.CancelledError:
            handle.fail()
            if self.control:
                catch = step.catch or (target.catch if target is not None else None)
                if catch is not None:
                    await self.clean_up(catch, target, step, args or {}, scope, path, name)
                self.tracker.step(path, name, "cancelled", statement_id=step.id, error=CANCELLED_MESSAGE,
                                  object_type=kind)
            raise
        except BaseException:
            handle.fail()
            raise
        handle.resolve(returns)
        return writes

    async def clean_up(self, catch: Catch, decl: FacetDecl | None, step: Step | None, args: dict[str, Any],
                       scope: Scope | None, path: str, name: str) -> None:
        """A cancelled step's catch, run to its end as cleanup with ``error_type == "Cancelled"``.

        Its activities run although the run is being cancelled; a cleanup that
        fails is logged, and the cancellation goes on either way.
        """
        self.tracker.log(path, "cancelled: running its catch as cleanup")
        cancelled = StepFailure(path, name, CANCELLED_MESSAGE, CANCELLED_TYPE)
        try:
            await shielded(lambda: self.run_catch(catch, decl, step, cancelled, args, scope, path))
        except (StepFailure, Skipped) as failure:
            self.tracker.log(path, f"cleanup failed: {failure}")

    def step_arguments(self, step: Step, scope: Scope, path: str, name: str) -> dict[str, Any]:
        try:
            return self.arguments.for_call(step.call, scope.params, scope.step_value)
        except EvaluationError as err:
            raise StepFailure(path, name, f"arguments: {err}", "EvaluationError") from err

    async def call(self, step: Step, target: FacetDecl | None, args: dict[str, Any], scope: Scope,
                   path: str) -> dict[str, Any]:
        """The call itself, one branch per kind of callee. A step's own tail takes precedence over a body."""
        check_nesting(scope, path, step.call.facet or step.call.name, self.config.max_nesting_depth,
                      self.depth_base)  # boundary
        own_tail = bool(step.blocks)
        if step.call.kind == "builtin":
            # A step of namespace ffl (a timer, a wait for a signal): the workflow performs it itself.
            if self.builtins is None:
                raise StepFailure(path, step.call.facet or "", "built-in steps need a run started by a release "
                                  "that has them", "InterpreterError")
            return await self.run_builtin(step.call.facet or "", args, path)
        if target is not None and dispatched(target):
            # An event (or prompt) facet: its handler answers; a body of its own runs after the handler.
            returns = await self.run_event(target, args, path, self.summary(step, path), step.call)
            if has_body(target) and not own_tail:
                return await self.run_declaration(target, args, path, scope, initial=returns)
            return self.return_defaults(target, returns, args, path)
        if target is not None and has_body(target) and not own_tail:
            # A composed facet (or a workflow called as a step): its body, with the arguments as ``$.``.
            return await self.run_declaration(target, args, path, scope)
        # A schema instance, or a facet with neither handler nor body: it holds its arguments.
        returns = dict(args)
        return self.return_defaults(target, returns, args, path) if target is not None else returns

    async def run_tail(self, step: Step, returns: dict[str, Any], scope: Scope,
                       path: str) -> tuple[dict[str, Any], list[Write]]:
        """The step's own andThen blocks: they see the step's returns; yields to its facet complete them."""
        if not step.blocks:
            return returns, []
        facet = step.call.facet or step.call.name
        tail = scope.child(path, steps={step.name: self.handle(step, returns)}, script_target=facet, owner=path)
        # run_blocks gives each tail block a fresh child scope of ``tail``, which holds only the step
        return self.split(await self.run_blocks(step.blocks, tail, path), facet, dict(returns))

    @staticmethod
    def split(writes: list[Write], facet: str, returns: dict[str, Any]) -> tuple[dict, list[Write]]:
        """Apply yields to the step's facet; pass the rest to the enclosing declaration."""
        outer: list[Write] = []
        owned: set[str] = set()
        for target, fields in writes:
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
        for target, fields in writes:
            if target in targets:
                merge_into(returns, fields, owned)
        return returns, []

    # ------------------------------------------------------------------ activities

    def summary(self, step: Step, path: str) -> str:
        """The activity's summary in the Web UI: the step as written and its readable path."""
        text = self.step_texts.get(step.id) if step.id else None
        if text is None:
            text = step_text(step)
            if step.id:
                self.step_texts[step.id] = text
        return activity_summary(text, path, self.root, self.tracker.items)

    async def run_event(self, decl: FacetDecl, args: dict[str, Any], path: str, summary: str = "",
                        call: Call | None = None) -> dict[str, Any]:
        """An event facet's handler: the activity named after the facet, on its queue, admitted by the run.

        The one place a handler is called: its options were built when the program loaded (a call with a
        policy of its own, on its first use). A handler cancelled with its run cancels the step.
        """
        facet = decl.qname
        size = oversize(args, self.value_limit)
        if size is not None:
            raise StepFailure(path, facet, too_large("arguments", size, self.value_limit), "PayloadTooLarge")
        options, retry = self.options.for_call(facet, call)
        hit = self.scale.memo.get(path) if self.scale is not None else None
        if hit is not None:  # scale hook: a continued run's memo answers without scheduling anything
            await self.scale.restored()
            result = self.recalled(hit, path, facet)
        else:
            self.tracker.task(path, facet, options["task_queue"], args)
            try:
                async with self.admission.slot(facet):
                    result = await self.execute(decl, call, args, path, summary or path, options)
            except ActivityError as err:
                if self.control and cancelled_activity(err):
                    raise asyncio.CancelledError(f"step '{path}' ({facet}) cancelled with its run") from err
                message, error_type = activity_failure(err)
                message = timeout_message(err, options["task_queue"], retry) or message  # boundary
                # The handler side prefixes the facet name; ``error`` holds the handler's own message.
                failure = StepFailure(path, facet, message.removeprefix(f"{facet}: "), error_type)
                self.remember(path, failure_entry(failure.cause, failure.error_type))
                raise failure from err
            self.remember(path, result_entry(result))
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise StepFailure(path, facet, f"handler returned {type(result).__name__}, not a record", "TypeError")
        check_returns(self.program, decl, result, path)  # boundary
        return result

    async def run_builtin(self, facet: str, args: dict[str, Any], path: str) -> dict[str, Any]:
        """A built-in step; under SCALE_PATCH its outcome joins the memo (a continued run neither sleeps nor waits
        for a signal again), and a run never continues as new while one is in flight."""
        assert self.builtins is not None
        if self.scale is None:
            return await self.builtins.run(facet, args, path)
        hit = self.scale.memo.get(path)
        if hit is not None:
            await self.scale.restored()
            return self.recalled(hit, path, facet) or {}
        await self.scale.gate()
        self.scale.builtins += 1
        try:
            returns = await self.builtins.run(facet, args, path)
        except StepFailure as failure:
            self.remember(path, failure_entry(failure.cause, failure.error_type))
            raise
        finally:
            self.scale.builtins -= 1
        self.remember(path, result_entry(returns))
        return returns

    def execute(self, decl: FacetDecl, call: Call | None, args: dict[str, Any], path: str, summary: str,
                options: workflow.ActivityConfig) -> Awaitable[Any]:
        """The handler's activity: a local activity where the interpreter worker serves it (scale hook), else one
        on the facet's queue."""
        facet = decl.qname
        if self.identity is not None:
            args = {**args, RUN_IDENTITY_KEY: self.identity}
        if self.scale is not None and runs_locally(self.config, decl, call):
            return self.execute_local(facet, args, path, summary, options)
        return workflow.execute_activity(facet, args, activity_id=path, summary=summary, **options)

    async def execute_local(self, facet: str, args: dict[str, Any], path: str, summary: str,
                            options: workflow.ActivityConfig) -> Any:
        try:
            return await workflow.execute_local_activity(facet, args, activity_id=path, summary=summary,
                                                         **local_options(options))
        except ActivityError:
            raise
        except FailureError as err:  # the SDK raises a local activity's failure unwrapped
            raise as_activity_error(err, facet, path) from err
        finally:
            self.scale.local_done()

    def remember(self, key: str, entry: dict[str, Any]) -> None:
        if self.scale is not None:
            self.scale.memo.put(key, entry)

    @staticmethod
    def recalled(entry: dict[str, Any], path: str, facet: str) -> Any:
        """A memo entry's result, or its failure raised again as it was first raised."""
        if "e" in entry:
            message, error_type = entry["e"]
            raise StepFailure(path, facet, message, error_type)
        return entry.get("r")

    async def run_script(self, script: Script | None, params: dict[str, Any], path: str, owner: str) -> dict[str, Any]:
        """Scripts never run in the workflow: RunScript runs them on the interpreter queue, found by id."""
        if script is None:
            return {}
        size = oversize(params, self.value_limit)
        if size is not None:
            raise StepFailure(path, owner or "script", too_large("script parameters", size, self.value_limit),
                              "PayloadTooLarge")
        hit = self.scale.memo.get(path) if self.scale is not None else None
        if hit is not None:  # scale hook: from a continued run's memo
            result = self.recalled(hit, path, owner or "script")
            return result if isinstance(result, dict) else {}
        try:
            async with self.admission.slot(RUN_SCRIPT_ACTIVITY):
                result = await workflow.execute_activity(
                    RUN_SCRIPT_ACTIVITY, ScriptRequest(self.tracker.program_hash, workflow.info().workflow_type,
                                                       script.id, params, path),
                    activity_id=path, summary=script_summary(owner, path, self.root), **self.options.script,
                )
        except ActivityError as err:
            message, error_type = activity_failure(err)
            self.remember(path, failure_entry(message, error_type))
            raise StepFailure(path, owner or "script", message, error_type) from err
        self.remember(path, result_entry(result))
        return result if isinstance(result, dict) else {}


__all__ = ["Interpreter", "Skipped", "StepFailure"]
