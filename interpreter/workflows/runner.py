"""The interpreter: a few recursive coroutines over the immutable Program.

- ``run_declaration`` runs a facet's pre-script and andThen blocks and merges
  their yields into the facet's returns;
- ``run_blocks``/``run_block`` run sibling blocks together and one block's
  steps, foreach iterations or when cases, returning its yields in order;
- ``run_step`` waits for exactly the steps its call references, performs the
  call (activity, inlined body, record) and its own tail, and handles catch.

Prompt facets (``prompt { ... }``) are dispatched exactly like event facets:
the activity type is the facet's qualified name, the payload its arguments,
so a handler registered under that name (e.g. one calling a language model)
answers it. Declared returns a handler or body leaves unset take their
default expression when they have one.

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
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RetryConfig, RuntimeConfig
    from interpreter.program.constants import RUN_SCRIPT_ACTIVITY
    from interpreter.program.display import activity_summary, script_summary, short_name, step_text
    from interpreter.program.evaluate import EvaluationError, evaluate
    from interpreter.program.model import Block, Catch, FacetDecl, Program, Script, Step, Yield
    from interpreter.program.scripts import ScriptRequest

from .arguments import Arguments
from .boundaries import check_nesting, check_returns, heartbeat, schedule_to_start, timeout_message
from .limits import oversize, too_large
from .schedule import FOREACH_WINDOW, dataflow, windowed
from .state import Handle, Scope, Skipped, StepFailure, Write, gather_all, join, merge_into
from .tracker import Tracker

BLOCK_TYPES = {"steps": "AndThen", "foreach": "AndMap", "when": "AndMatch", "script": "AndThen"}
"""Mirror object types of blocks (docs/mirror.md); a foreach iteration is an AndThen inside its AndMap."""


def _no_steps(name: str) -> Any:
    raise EvaluationError(f"step '{name}' cannot be read in a default value")


def retry_policy(retry: RetryConfig) -> RetryPolicy:
    return RetryPolicy(
        maximum_attempts=retry.maximum_attempts,
        initial_interval=timedelta(seconds=retry.initial_interval_seconds),
        backoff_coefficient=retry.backoff_coefficient,
        maximum_interval=timedelta(seconds=retry.maximum_interval_seconds),
        non_retryable_error_types=list(retry.non_retryable_error_types) or None,
    )


def activity_failure(err: ActivityError) -> tuple[str, str]:
    """(message, type name) of the cause of a failed activity."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return cause.message, cause.type or "ApplicationError"
    if isinstance(cause, TimeoutError):
        return f"activity timed out ({cause.type.name if cause.type else 'timeout'})", "TimeoutError"
    if cause is not None:
        return str(cause) or type(cause).__name__, type(cause).__name__
    return str(err), "ActivityError"


class Interpreter:
    def __init__(self, program: Program, config: RuntimeConfig, tracker: Tracker):
        self.program = program
        self.config = config
        self.tracker = tracker
        self.arguments = Arguments(program)
        self.declared: dict[str, tuple[str, ...]] = {}  # facet → declared returns, computed once
        # Bounds pending activities: see RuntimeConfig.max_pending_activities for why.
        self.activity_slots = asyncio.Semaphore(config.max_pending_activities)
        self.root = ""  # the workflow's short name, leading readable paths in activity summaries
        self.step_texts: dict[str, str] = {}  # statement id → the step as written, computed once

    # ------------------------------------------------------------------ declarations

    def workflow_params(self, decl: FacetDecl, inputs: dict[str, Any]) -> dict[str, Any]:
        """Inputs with defaults applied; unknown or missing parameters fail the run at once."""
        accepted = self.arguments.accepted(decl)
        unknown = [name for name in inputs if name not in accepted]
        if unknown:
            raise ApplicationError(
                f"workflow '{decl.qname}' has no parameter {', '.join(repr(n) for n in unknown)} "
                f"(parameters: {', '.join(accepted) or 'none'})", type="InvalidParameters", non_retryable=True)
        implicit = {a.name for i in self.program.implicits.get(decl.qname, []) for a in i.call.args}
        missing = [p.name for p in decl.params if p.default is None and p.name not in inputs
                   and p.name not in implicit]
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
        targets = {decl.qname, *(m.facet for m in decl.mixins if m.facet)}
        for target, fields in writes:
            if target in targets:
                merge_into(returns, fields)
            else:
                self.tracker.log(path, f"yield to '{target}' has no effect in '{decl.qname}'")
        return self.return_defaults(decl, returns, params, path)

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

    def handles(self, steps: list[Step]) -> dict[str, Handle]:
        return {s.name: self.handle(s) for s in steps}

    def handle(self, step: Step, returns: dict[str, Any] | None = None) -> Handle:
        """A step's handle; a step that can catch reads ``error``/``error_type`` as null until it fails."""
        facet = step.call.facet or ""
        declared = self.declared.get(facet)
        if declared is None:
            declared = self.declared[facet] = self.arguments.declared_returns(step.call.facet)
        decl = self.program.facets.get(facet)
        catchable = step.catch is not None or (decl is not None and decl.catch is not None)
        handle = Handle(step.name, declared, ("error", "error_type") if catchable else ())
        if returns is not None:
            handle.resolve(returns)
        return handle

    async def run_block(self, block: Block, scope: Scope) -> list[Write]:
        return await self.tracked(scope.path, BLOCK_TYPES.get(block.kind, "AndThen"), scope.owner,
                                  self.run_block_body(block, scope))

    async def tracked(self, path: str, object_type: str, owner: str | None, work, foreach=None) -> list[Write]:
        """Await a block's coroutine, mirroring it as a block step (running, then completed or failed)."""
        self.tracker.block(path, object_type, "running", parent=owner, foreach=foreach)
        try:
            writes = await work
        except (StepFailure, Skipped) as failure:
            self.tracker.block(path, object_type, "failed", parent=owner, error=str(failure))
            raise
        self.tracker.block(path, object_type, "completed", parent=owner)
        return writes

    async def run_block_body(self, block: Block, scope: Scope) -> list[Write]:
        if block.kind == "steps":
            for step in block.steps:
                if step.name not in scope.steps:
                    scope.steps[step.name] = self.handle(step)
            return await self.run_steps(block, scope)
        if block.kind == "foreach":
            return await self.run_foreach(block, scope)
        if block.kind == "when":
            return await self.run_when(block, scope)
        if block.kind == "script":
            result = await self.run_script(block.script, scope.params, join(scope.path, "script"), scope.script_target)
            return [(scope.script_target, result)]
        raise StepFailure(scope.path, "", f"unknown block kind '{block.kind}'", "InterpreterError")

    async def run_steps(self, block: Block, scope: Scope) -> list[Write]:
        """All steps concurrently (each waits for its references), then the block's yields."""
        steps = block.steps
        results = await dataflow(steps, lambda i: self.run_step(steps[i], scope, scope.steps[steps[i].name]))
        writes = [write for step_writes in results for write in step_writes]
        for item in block.yields:
            writes.append(await self.run_yield(item, scope))
        return writes

    async def run_yield(self, item: Yield, scope: Scope) -> Write:
        await scope.wait_for(item.refs)
        target = item.target or item.name
        try:
            fields = {arg.name: evaluate(arg.value, scope.params, scope.step_value) for arg in item.args}
        except EvaluationError as err:
            raise StepFailure(join(scope.path, f"yield {item.name}"), target, str(err), "EvaluationError") from err
        self.tracker.block(join(scope.path, f"yield {item.name}"), "YieldAssignment", "completed",
                           parent=scope.owner, returns=fields, facet=target)
        return target, fields

    async def run_foreach(self, block: Block, scope: Scope) -> list[Write]:
        await scope.wait_for(block.items_refs)
        try:
            items = evaluate(block.items, scope.params, scope.step_value) if block.items is not None else []
        except EvaluationError as err:
            raise StepFailure(join(scope.path, "foreach"), "foreach", str(err), "EvaluationError") from err
        if items is None:
            items = []
        if not isinstance(items, list):
            raise StepFailure(join(scope.path, "foreach"), "foreach",
                              f"foreach needs a list, got {type(items).__name__}", "TypeError")
        var = block.var or "item"

        def iteration(index: int):
            inner = scope.child(f"{scope.path}/foreach[{index}]", {**scope.params, var: items[index]},
                                self.handles(block.steps))
            return self.tracked(inner.path, "AndThen", scope.owner, self.run_steps(block, inner), (var, items[index]))

        results = await windowed(len(items), iteration, max(FOREACH_WINDOW, self.config.max_pending_activities))
        return [write for writes in results for write in writes]

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
        bodies = []
        for index in chosen:
            body = block.cases[index].body
            bodies.append(self.run_block(body, scope.child(f"{scope.path}/c{index}")))
        results = await gather_all(bodies)
        return [write for writes in results for write in writes]

    # ------------------------------------------------------------------ steps

    async def run_step(self, step: Step, scope: Scope, handle: Handle) -> list[Write]:
        """Wait for the step's references, run it, resolve its handle; return yields meant for outer targets."""
        path = join(scope.path, step.name)
        facet = step.call.facet or step.call.name
        try:
            await scope.wait_for(step.refs)
            returns, writes = await self.execute_step(step, scope, path, facet)
        except StepFailure as failure:
            scope.fail()
            handle.fail()
            self.tracker.step(path, facet, "failed", statement_id=step.id, error=str(failure),
                              object_type=self.object_type(step))
            raise
        except BaseException:
            handle.fail()
            raise
        handle.resolve(returns)
        return writes

    @staticmethod
    def object_type(step: Step) -> str:
        return "SchemaInstantiation" if step.call.kind == "schema" else "VariableAssignment"

    async def execute_step(self, step: Step, scope: Scope, path: str, facet: str) -> tuple[dict, list[Write]]:
        kind = self.object_type(step)
        decl = self.program.facets.get(step.call.facet or "")
        args: dict[str, Any] | None = None
        self.tracker.step(path, facet, "running", statement_id=step.id, object_type=kind, parent=scope.owner,
                          block=scope.path)
        try:
            try:
                args = self.arguments.for_call(step.call, scope.params, scope.step_value)
            except EvaluationError as err:
                raise StepFailure(path, facet, f"arguments: {err}", "EvaluationError") from err
            returns, writes = await self.perform(step, decl, args, scope, path)
        except StepFailure as failure:
            catch = step.catch or (decl.catch if decl is not None else None)
            if catch is None:
                failure.failed_within(path, facet)
                raise
            self.tracker.log(path, f"caught {failure}")
            returns, writes = await self.run_catch(catch, decl, step, failure, args or {}, scope, path)
            self.tracker.step(path, facet, "caught", statement_id=step.id, object_type=kind, returns=returns,
                              error=failure.cause, params=args)
            return returns, writes
        self.tracker.step(path, facet, "completed", statement_id=step.id, object_type=kind, params=args,
                          returns=returns)
        return returns, writes

    async def perform(self, step: Step, decl: FacetDecl | None, args: dict[str, Any], scope: Scope,
                      path: str) -> tuple[dict, list[Write]]:
        """The call itself, then the step's own tail (which takes precedence over the facet's body)."""
        call = step.call
        check_nesting(scope, path, call.facet or call.name, self.config.max_nesting_depth)  # boundary
        has_body = decl is not None and (bool(decl.blocks) or decl.script is not None)
        if decl is not None and (call.kind == "event" or decl.prompt is not None):
            # Prompt facets dispatch like event facets: a handler registered under the facet's name answers.
            returns = await self.run_activity(decl, call.queue, args, path, self.summary(step, path))
            if has_body and not step.blocks:
                returns = await self.run_declaration(decl, args, path, scope, initial=returns)
            else:
                returns = self.return_defaults(decl, returns, args, path)
        elif call.kind in ("facet", "workflow") and decl is not None and has_body and not step.blocks:
            returns = await self.run_declaration(decl, args, path, scope)
        else:
            returns = dict(args)
            if decl is not None:
                returns = self.return_defaults(decl, returns, args, path)
        if not step.blocks:
            return returns, []
        facet = call.facet or call.name
        tail = scope.child(path, steps={step.name: self.handle(step, returns)}, script_target=facet, owner=path)
        # run_blocks gives each tail block a fresh child scope of ``tail``, which holds only the step
        return self.split(await self.run_blocks(step.blocks, tail, path), facet, dict(returns))

    @staticmethod
    def split(writes: list[Write], facet: str, returns: dict[str, Any]) -> tuple[dict, list[Write]]:
        """Apply yields to the step's facet; pass the rest to the enclosing declaration."""
        outer: list[Write] = []
        for target, fields in writes:
            if target == facet:
                merge_into(returns, fields)
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
        for target, fields in writes:
            if target in targets:
                merge_into(returns, fields)
        return returns, []

    # ------------------------------------------------------------------ activities

    def summary(self, step: Step, path: str) -> str:
        """The activity's summary in the Web UI: the step as written and its readable path."""
        text = self.step_texts.get(step.id) if step.id else None
        if text is None:
            text = step_text(step)
            if step.id:
                self.step_texts[step.id] = text
        return activity_summary(text, path, self.root)

    async def run_activity(self, decl: FacetDecl, queue: str | None, args: dict[str, Any], path: str,
                           summary: str = "") -> dict:
        """An event facet's handler, as the activity named after the facet on its queue."""
        facet = decl.qname
        retry = self.config.retry_for(facet)
        task_queue = self.config.queue_for(facet, queue or decl.queue)
        size = oversize(args)
        if size is not None:
            raise StepFailure(path, facet, too_large("arguments", size), "PayloadTooLarge")
        self.tracker.task(path, facet, task_queue, args)
        try:
            async with self.activity_slots:
                result = await workflow.execute_activity(
                    facet, args, task_queue=task_queue, activity_id=path,
                    start_to_close_timeout=timedelta(seconds=retry.start_to_close_seconds),
                    schedule_to_start_timeout=schedule_to_start(retry), heartbeat_timeout=heartbeat(retry),  # boundary
                    retry_policy=retry_policy(retry), summary=summary or path,
                )
        except ActivityError as err:
            message, error_type = activity_failure(err)
            message = timeout_message(err, task_queue, retry) or message  # boundary
            # The handler side prefixes the facet name; ``error`` holds the handler's own message.
            raise StepFailure(path, facet, message.removeprefix(f"{facet}: "), error_type) from err
        if result is None:
            return {}
        if not isinstance(result, dict):
            raise StepFailure(path, facet, f"handler returned {type(result).__name__}, not a record", "TypeError")
        check_returns(self.program, decl, result, path)  # boundary
        return result

    async def run_script(self, script: Script | None, params: dict[str, Any], path: str, owner: str) -> dict[str, Any]:
        """Scripts never run in the workflow: RunScript runs them on the interpreter queue, found by id."""
        if script is None:
            return {}
        retry = self.config.retry
        size = oversize(params)
        if size is not None:
            raise StepFailure(path, owner or "script", too_large("script parameters", size), "PayloadTooLarge")
        try:
            async with self.activity_slots:
                result = await workflow.execute_activity(
                    RUN_SCRIPT_ACTIVITY, ScriptRequest(self.tracker.program_hash, workflow.info().workflow_type,
                                                       script.id, params, path),
                    task_queue=workflow.info().task_queue, activity_id=path,
                    start_to_close_timeout=timedelta(seconds=retry.start_to_close_seconds),
                    retry_policy=retry_policy(retry), summary=script_summary(owner, path, self.root),
                )
        except ActivityError as err:
            message, error_type = activity_failure(err)
            raise StepFailure(path, owner or "script", message, error_type) from err
        return result if isinstance(result, dict) else {}


__all__ = ["Interpreter", "Skipped", "StepFailure"]
