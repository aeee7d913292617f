"""FFLWorkflow: the one dynamic Temporal workflow that runs every FFL workflow, and every chunk of a
large foreach (type ``ffl.Iterations``).

Its type is the FFL workflow's qualified name, its input one JSON object of
parameters and its result one JSON object of returns. The first action pins
the program, its hash and the runtime config in history (LoadProgram), so a
replay never sees a program published later. Both entry points then set up
one ``Session``, the history's ``Tracker`` (steps query, mirror records) and
its effects (stack.py), and hand the program to the language's interpreter
(interpreter.semantics). The interpreter's own activities (LoadProgram,
RunScript, Mirror) go to the task queue the run itself is on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue, SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.constants import (
        CHUNK_WORKFLOW,
        LOAD_PROGRAM_ACTIVITY,
        MEMO_MIGRATED,
        MEMO_PROGRAM_HASH,
        MIGRATE_UPDATE,
        RECOVERY_QUERY,
        SIGNALS_QUERY,
        STEPS_QUERY,
        WARNINGS_QUERY,
    )
    from interpreter.program.display import program_details, short_name
    from interpreter.program.locate import find_block
    from interpreter.program.queries import StepsPage, steps_query
    from interpreter.program.runinfo import namespace_of, run_memo, run_search_attributes
    from interpreter.semantics import Handle, Interpreter, Scope, Skipped, StepFailure
    from interpreter.semantics.limits import oversize, too_large

from . import resume, trust
from .boundaries import activity_failure, check_input_size, decode_inputs
from .children import chunk_failure, compacted
from .chunks import ChunkFailure, ChunkRequest, ChunkResult
from .continuation import MIRROR_BATCH_BYTES_BY_REFERENCE, Scale, local_pace
from .features import Level, child_level, fresh_level, known_level, run_level
from .loading import load_pinned
from .options import load_program_options
from .outbox import MIRROR_BATCH_BYTES, Outbox
from .outcomes import check_migrate_request, failure_of
from .session import Session
from .signals import Signals, decode_payload
from .stack import build_effects
from .tracker import Tracker


def describe(name: str, program_hash: str, sources: list[str], config: RuntimeConfig, metadata: bool) -> None:
    """The run's memo and search attributes (where registered, as pinned in config); 0.1.0 runs kept the
    program hash alone."""
    if not metadata:
        if trust.memo_value(MEMO_PROGRAM_HASH) != program_hash:
            workflow.upsert_memo({MEMO_PROGRAM_HASH: program_hash})
        return
    memo = run_memo(name, program_hash, sources)
    changed = {key: value for key, value in memo.items() if trust.memo_value(key) != value}
    if changed:
        workflow.upsert_memo(changed)
    if config.search_attributes:
        workflow.upsert_search_attributes([SearchAttributeKey.for_keyword(key).value_set(value)
                                           for key, value in run_search_attributes(name, program_hash).items()])


@workflow.defn(dynamic=True, sandboxed=True)
class FFLWorkflow:
    def __init__(self) -> None:
        self.signals = Signals()  # signals may arrive before the program is loaded: kept
        self.session: Session | None = None  # set once by the entry point, with the tracker
        self.tracker: Tracker | None = None
        self.scale: Scale | None = None  # what the run completed, for a later resume (the recovery query)
        self.inputs: Any = None
        self.move_checked = False  # the program ffl migrate names was loaded once (check_move)

    @workflow.run
    async def run(self, args: Sequence[RawValue]) -> Any:
        if workflow.info().workflow_type == CHUNK_WORKFLOW:
            return await self.run_chunk(args)
        return await self.run_workflow(args)

    async def run_workflow(self, args: Sequence[RawValue]) -> dict[str, Any]:
        """An FFL workflow: its parameters in, its returns out; past its history limit it continues as new."""
        info = workflow.info()
        name = info.workflow_type
        continued = trust.continuation(args)  # trust boundary: honoured only from the run it continues
        inputs = decode_inputs(args)  # boundary: too deep, NaN or undecodable input fails the run at once
        resumed = resume.marker() if continued is None else None
        if resumed is not None:  # the closed run's results, read from Temporal by the run itself (resume.py)
            continued, inputs = await resume.resume_run(resumed, name)
        run_id = continued.run_id if continued is not None else info.run_id
        self.inputs = inputs
        # A continued run loads the program its first run pinned, and keeps that run's configuration.
        pinned = continued.program_hash if continued is not None else trust.pinned_hash()
        fresh = fresh_level()  # since LOCAL_LOAD, read before the program loads (features.py)
        program, loaded = await load_pinned(name, pinned, local=fresh is not None,
                                            settle=fresh is not None and fresh >= Level.BRIEF_TASKS)
        program_hash = loaded["hash"]
        sources = loaded.get("sources") or []
        config = RuntimeConfig.model_validate(continued.config if continued is not None else loaded.get("config") or {})
        level = run_level(lambda metadata: describe(name, program_hash, sources, config, metadata), fresh)
        scale = self.scale = Scale(config.continue_after_events, continued, local_pace(level)) if level >= Level.SCALE else None
        if scale is not None and loaded.get("settle"):
            scale.end_task()  # this task parsed a program that was slow to load: steps start in the next
        if continued is not None and continued.moved_from:  # ffl migrate moved the run here: its lineage
            workflow.upsert_memo({MEMO_MIGRATED: {"from": continued.moved_from, "to": program_hash}})
        if continued is not None and continued.signals:
            self.signals.restore(continued.signals)  # kept payloads and the received log go on
        session = self.session = Session.open(name, program, program_hash, config, level,
                                              (info.workflow_id, run_id), info.task_queue)
        tracker = self.tracker = Tracker(
            info.workflow_id, run_id, program_hash, mirror=config.mirror,
            seq=continued.seq if continued is not None else 0, quiet=scale.memo.restored if scale else (),
            earlier=continued.earlier if continued is not None else None,
            root=short_name(name), header=program_details(name, program_hash, sources, namespace_of(name)))
        if continued is None:
            tracker.runner(name, "created", program_hash=program_hash)  # mirror only: the program is pinned
        outbox = Outbox(tracker, session.options.mirror,
                        MIRROR_BATCH_BYTES_BY_REFERENCE if scale else MIRROR_BATCH_BYTES) if config.mirror else None
        params: dict[str, Any] | None = None
        try:
            decl = program.facets.get(name)
            if decl is None or decl.kind != "workflow":
                raise ApplicationError(f"program {program_hash} has no workflow '{name}'", type="ProgramNotFound",
                                       non_retryable=True)
            effects, admission = build_effects(session, tracker, self.signals, scale)
            interpreter = Interpreter(program, effects, tracker, session.rules, scale.snapshot if scale else None)
            params = interpreter.workflow_params(decl, inputs)
            check_input_size(decl, params, session.rules.value_limit)  # boundary: the value limit, at once
            if continued is None or resumed is not None:
                tracker.runner(name, "running", params=params, program_hash=program_hash)
            if scale is None:
                returns = await interpreter.run_workflow(decl, params)
            else:  # past its history limit the run continues as new, its memo carried
                done, returns = await scale.run(interpreter.run_workflow(decl, params), admission)
                if done and scale.moving_to:  # moving (ffl migrate): the new program's run decides the returns
                    done = not await self.check_move(name)
                if not done:
                    await drain(outbox)
                    await self.check_move(name)
                    carried = scale.carry(tracker, run_id, program_hash, config.model_dump(mode="json"),
                                          self.signals.carry())
                    workflow.continue_as_new(args=[inputs, carried])
            limit = session.rules.value_limit
            size = oversize(returns, limit)
            if size is not None:
                raise ApplicationError(f"workflow '{name}': {too_large('returns', size, limit)}",
                                       type="PayloadTooLarge", non_retryable=True)
        except asyncio.CancelledError:
            # Cancellation with cleanup: in-flight activities were asked to cancel; record the
            # run as cancelled and send the mirror's last records before ending as cancelled.
            tracker.log("", "workflow cancelled")
            tracker.runner(name, "cancelled", params=params, error="cancelled", program_hash=program_hash)
            await drain(outbox)
            raise
        except Exception as err:
            failure = failure_of(name, err)
            tracker.runner(name, "failed", params=params, error=str(failure), program_hash=program_hash)
            await drain(outbox)
            raise failure from None
        tracker.runner(name, "completed", params=params, returns=returns, program_hash=program_hash)
        await drain(outbox)
        return returns

    async def run_chunk(self, args: Sequence[RawValue]) -> ChunkResult:
        """A child workflow: iterations of one foreach, in a history of their own, as the parent would run them —
        same step paths, activity ids and mirror identity (the root run's); their yields by index, or the failure
        that stopped them."""
        request = trust.chunk_request(args, ChunkRequest)  # trust boundary: from a parent of its own run only
        known_level(request.level)
        continued = trust.continuation(args, root=False)
        if continued is None and request.recover:  # a child of a resumed run: the closed child's iterations
            continued = await resume.resume_chunk(request.recover, request.again, request.root_id, request.seq,
                                                  request.root_run, request.program_hash, request.config)
        program, loaded = await load_pinned(request.workflow, request.program_hash,
                                            local=request.level >= Level.LOCAL_LOAD,
                                            settle=request.level >= Level.BRIEF_TASKS)
        config = RuntimeConfig.model_validate(request.config)
        session = self.session = Session.open(request.workflow, program, request.program_hash, config, child_level(request.level),
                                              (request.root_id, request.root_run), workflow.info().task_queue,
                                              depth_base=request.depth)
        last = request.first + len(request.items) - 1
        scale = self.scale = Scale(config.continue_after_events, continued, local_pace(session.level))
        if loaded.get("settle"):
            scale.end_task()  # as in run()
        places = {request.owner: tuple(request.owner_place)} if request.owner and request.owner_place else None
        tracker = self.tracker = Tracker(
            request.root_id, request.root_run, request.program_hash, mirror=config.mirror,
            seq=continued.seq if continued is not None else request.seq, quiet=scale.memo.restored,
            earlier=continued.earlier if continued is not None else None,
            root=session.root, header=f"**FFL** iterations {request.first} to {last} of `{request.path}` in run "
                                      f"`{request.root_id}`", places=places, blocks=[request.path])
        block = find_block(program, request.block)
        outbox = Outbox(tracker, session.options.mirror, MIRROR_BATCH_BYTES_BY_REFERENCE) if config.mirror else None
        effects, admission = build_effects(session, tracker, self.signals, scale, seq_base=request.seq)
        interpreter = Interpreter(program, effects, tracker, session.rules, scale.snapshot)
        handles = {o.name: Handle.resolved(o.name, tuple(o.declared), o.returns, tuple(o.nullable))
                   for o in request.outer}
        scope = Scope(request.params, request.path, None, None, request.script_target, handles, request.owner)
        indexes = range(request.first, request.first + len(request.items))
        result = ChunkResult()
        try:
            done, writes = await scale.run(interpreter.run_iterations(block, scope, request.items, indexes), admission)
            if not done:
                await drain(outbox)
                workflow.continue_as_new(args=[request, scale.carry(tracker, request.root_run,
                                                                    request.program_hash, request.config)])
            # The chunk's yields as the few writes that merge the same (children.compacted): a thousand
            # iterations' one-key writes were 34 KB of every child's result in the parent's history, 6 KB now.
            result.writes = compacted([[list(write) for write in iteration] for iteration in writes])
        except StepFailure as failure:
            result.failure = chunk_failure(failure)
        except Skipped as skipped:  # nothing outside the chunk can fail; kept for completeness of the contract
            result.failure = ChunkFailure(request.path, "foreach", str(skipped), "Skipped")
        result.counts = tracker.totals()
        result.run = workflow.info().run_id
        await drain(outbox)
        return result

    def reported_run(self) -> tuple[str, str] | None:
        """The logical run this history's handlers report under, if not its own (the run header's value)."""
        return None if self.session is None else self.session.reported_run()

    @workflow.query(name=STEPS_QUERY)
    def steps(self, query: Any = None) -> list[dict[str, Any]] | StepsPage:
        """Started steps (path, facet, state, returns once finished, error): a page, or the first 1,000.

        Without an argument, a plain list as before; a bad query is refused (interpreter.program.queries).
        """
        if self.tracker is None:  # the program is still loading
            return [] if query is None else StepsPage()
        if query is None:
            return self.tracker.snapshot()
        return self.tracker.page(steps_query(query))

    # ------------------------------------------------------------------ signals and updates

    @workflow.signal(dynamic=True)
    def on_signal(self, name: str, args: Sequence[RawValue]) -> None:
        """Any signal: the payload of an ``ffl.WaitForSignal(name = ...)``, taken now or kept for later."""
        try:
            payload = decode_payload(args, name)
        except ApplicationError as err:  # a bad payload must not fail the run: it is refused and said so
            self.log(f"{err.message}: refused")
            return
        if self.signals.deliver(name, payload) is None and (self.session is None or self.session.level >= Level.CONTROL):
            self.log(f"signal '{name}' received; no step waits for it yet: kept for the next "
                     f"ffl.WaitForSignal(name = \"{name}\")")

    def log(self, message: str) -> None:
        """A line of the run's own log (the mirror's too, once the run has loaded)."""
        if self.tracker is None:
            workflow.logger.info("workflow: %s", message)
        else:
            self.tracker.log("", message)

    @workflow.update(dynamic=True)
    def on_update(self, name: str, args: Sequence[RawValue]) -> dict[str, Any]:
        """``ffl signal --wait``: the payload goes to the oldest step waiting on ``name``; returns its path."""
        step = self.signals.deliver(name, decode_payload(args, name), via="update")
        return {"step": step}

    @on_update.validator
    def check_update(self, name: str, args: Sequence[RawValue]) -> None:
        """Refuse an update that no step waits for (it would have nowhere to go) or whose payload is unsafe."""
        decode_payload(args, name)
        if not self.signals.waiting_on(name):
            raise ApplicationError(f"no step waits for signal '{name}' (an ffl.WaitForSignal(name = \"{name}\") "
                                   "must be waiting; send a signal instead to have it kept)", type="NotWaiting")

    async def check_move(self, name: str) -> bool:
        """Before a run moves to another program (ffl migrate), that its workers can load it: else it goes on
        with its own, saying why. Whether it moves."""
        scale = self.scale
        if scale is None or not scale.moving_to or self.move_checked:
            return scale is not None and bool(scale.moving_to)
        self.move_checked = True
        try:
            await workflow.execute_activity(
                LOAD_PROGRAM_ACTIVITY, {"workflow": name, "hash": scale.moving_to}, activity_id="load-program/move",
                summary=f"FFL machinery: checks program {scale.moving_to} loads before the run moves to it",
                **load_program_options(workflow.info().task_queue))
        except ActivityError as err:
            self.log(f"not moved to program {scale.moving_to}: {activity_failure(err)[0]}")
            scale.moving_to = ""
        return bool(scale.moving_to)

    @workflow.update(name=MIGRATE_UPDATE)
    def migrate(self, program_hash: str) -> dict[str, str]:
        """``ffl migrate``: hold, let what is in flight finish, continue as new with ``program_hash``."""
        assert self.scale is not None  # the validator says so
        self.scale.moving_to = program_hash
        self.log(f"moves to program {program_hash} at its next safe point (ffl migrate)")
        return {"moving_to": program_hash}

    @migrate.validator
    def check_migrate(self, program_hash: str) -> None:
        loaded = self.session is not None and workflow.info().workflow_type != CHUNK_WORKFLOW
        check_migrate_request(program_hash, self.session.program_hash if self.session and loaded else None,
                              self.scale)

    @workflow.query(name=RECOVERY_QUERY)
    def recovery(self) -> dict[str, Any]:
        """What this run completed and how it ran, for a run resuming it (resume.py); closed runs answer too."""
        if (self.session is None or self.tracker is None) and workflow.info().workflow_type == CHUNK_WORKFLOW:
            return {"memo": {}, "children": {}, "resolved": {}, "program_hash": "", "in_flight": []}  # did nothing
        if self.session is None or self.tracker is None:
            raise ApplicationError("the run ended before its program was loaded: nothing to resume from "
                                   "(start it again)", type="NotResumable")
        return resume.recovery_answer(self.session, self.tracker, self.scale, self.inputs, self.signals.carry())

    @workflow.query(name=WARNINGS_QUERY)
    def warnings(self) -> list[dict[str, str]]:
        """Values the run passed on although they do not fit their types (``type_checks: warn``), newest 100."""
        return [] if self.tracker is None else list(self.tracker.warnings)

    @workflow.query(name=SIGNALS_QUERY)
    def signals_received(self) -> dict[str, Any]:
        """Every signal received (the newest 1,000) and what became of it; who waits on which name."""
        return self.signals.snapshot()


async def drain(outbox: Outbox | None) -> None:
    """Wait until every mirror record is sent (the run closes, or continues as new)."""
    if outbox is not None:
        await outbox.drain()
