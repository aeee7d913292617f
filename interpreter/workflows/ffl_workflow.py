"""FFLWorkflow: the one dynamic Temporal workflow that runs every FFL workflow.

Its type is the FFL workflow's qualified name, its input one JSON object of
parameters and its result one JSON object of returns. The first action pins
the program, its hash and the runtime config in history (LoadProgram), so a
replay never sees a program published later. The interpreter's own
activities (LoadProgram, RunScript, Mirror) go to the task queue the run
itself is on — INTERPRETER_QUEUE ("ffl") in production — so a test or a
second deployment on another queue stays self-contained.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue, SearchAttributeKey
from temporalio.exceptions import ActivityError, ApplicationError, TemporalError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.constants import (
        CHUNK_WORKFLOW,
        MEMO_PROGRAM_HASH,
        MIRROR_ACTIVITY,
        SIGNALS_QUERY,
        STEPS_QUERY,
    )
    from interpreter.program.display import program_details, short_name
    from interpreter.program.model import Program
    from interpreter.program.queries import StepsPage, steps_query
    from interpreter.program.runinfo import namespace_of, run_memo, run_search_attributes

from .boundaries import check_params, decode_inputs
from .builtins import Builtins
from .cancellation import CONTROL_PATCH
from .children import run_chunk
from .continuation import MIRROR_BATCH_BYTES_BY_REFERENCE, SCALE_PATCH, Continuation, Scale, continuation_of
from .limits import oversize, too_large
from .loading import load_pinned
from .options import ActivityOptions
from .runner import Interpreter
from .signals import Signals, decode_payload
from .state import Skipped, StepFailure
from .tracker import Tracker

RUN_METADATA_PATCH = "ffl-run-metadata"
"""Patch introduced after release 0.1.0: a run's memo also names its workflow, namespace and sources,
and FFL's search attributes are upserted where registered. 0.1.0 histories upserted the program hash alone."""

MIRROR_BATCH = 500
"""Most records sent in one Mirror activity; records gather while one is in flight."""

MIRROR_BATCH_BYTES = 512 * 1024
"""Most JSON bytes in one Mirror activity input (Temporal refuses payloads over 2 MB)."""


@workflow.defn(dynamic=True, sandboxed=True)
class FFLWorkflow:
    def __init__(self) -> None:
        self.tracker = Tracker()
        self.closing = False
        self.options: ActivityOptions | None = None
        self.mirror_bytes = MIRROR_BATCH_BYTES
        self.signals = Signals(self.tracker)  # signals may arrive before the program is loaded: kept
        self.control = False

    @workflow.run
    async def run(self, args: Sequence[RawValue]) -> Any:
        info = workflow.info()
        if info.workflow_type == CHUNK_WORKFLOW:  # scale hook: a child running part of a large foreach
            return await run_chunk(self, args)
        name = info.workflow_type
        continued = continuation_of(args)  # scale hook: a run continued as new carries its memo
        self.tracker.bind(info.workflow_id, continued.run_id if continued is not None else info.run_id)
        self.tracker.workflow_name = name
        inputs = self.inputs(args)
        program, program_hash, config = await self.load(name, continued)
        # Durable control (built-ins, policies, cancellation with cleanup) for runs started with it only.
        self.control = workflow.patched(CONTROL_PATCH)
        self.signals.logging = self.control
        scale = Scale(config.continue_after_events, continued) if workflow.patched(SCALE_PATCH) else None
        if scale is not None:
            self.mirror_bytes = MIRROR_BATCH_BYTES_BY_REFERENCE
        if continued is not None and continued.signals:
            self.signals.restore(continued.signals)  # kept payloads and the received log go on
        self.options = ActivityOptions(program, config, info.task_queue, self.control)
        self.tracker.mirror = config.mirror
        if continued is not None:
            self.tracker.seq, self.tracker.program_hash = continued.seq, program_hash
        else:
            self.tracker.runner(name, "created", program_hash=program_hash)  # mirror only: the program is pinned
        flusher = asyncio.create_task(self.flush_mirror()) if config.mirror else None
        params: dict[str, Any] | None = None
        try:
            decl = program.facets.get(name)
            if decl is None or decl.kind != "workflow":
                raise ApplicationError(f"program {program_hash} has no workflow '{name}'", type="ProgramNotFound",
                                       non_retryable=True)
            interpreter = Interpreter(program, config, self.tracker, self.options,
                                      Builtins(self.signals, self.tracker) if self.control else None, scale=scale)
            params = interpreter.workflow_params(decl, inputs)
            check_params(program, decl, params)  # boundary: declared types, before any step runs
            if continued is None:
                self.tracker.runner(name, "running", params=params, program_hash=program_hash)
            if scale is None:
                returns = await interpreter.run_workflow(decl, params)
            else:  # scale hook: past its history limit the run continues as new, its memo carried
                done, returns = await scale.run(interpreter.run_workflow(decl, params))
                if not done:
                    await self.drain_mirror(flusher)
                    carried = scale.carry(self.tracker.seq, self.tracker.run_id, program_hash,
                                          config.model_dump(mode="json"), self.signals.carry())
                    workflow.continue_as_new(args=[inputs, carried])
            size = oversize(returns, interpreter.value_limit)
            if size is not None:
                raise ApplicationError(f"workflow '{name}': {too_large('returns', size, interpreter.value_limit)}",
                                       type="PayloadTooLarge", non_retryable=True)
        except asyncio.CancelledError:
            # Cancellation with cleanup: in-flight activities were asked to cancel; record the
            # run as cancelled and send the mirror's last records before ending as cancelled.
            self.tracker.log("", "workflow cancelled")
            await self.finish(flusher, name, "cancelled", params, None, "cancelled", program_hash)
            raise
        except Exception as err:
            failure = self.failure(name, err)
            await self.finish(flusher, name, "failed", params, None, str(failure), program_hash)
            raise failure from None
        await self.finish(flusher, name, "completed", params, returns, None, program_hash)
        return returns

    @staticmethod
    def failure(name: str, err: Exception) -> Exception:
        """The error that fails the run: its message names the failing step, facet and cause.

        Temporal's own errors (non-determinism, sandbox) are re-raised as they
        are so the workflow task fails and can be retried with fixed code; any
        other unexpected error fails the run instead of retrying it forever.
        """
        if isinstance(err, StepFailure):
            return ApplicationError(str(err), type=err.error_type, non_retryable=True)
        if isinstance(err, Skipped):
            return ApplicationError(f"workflow '{name}' stopped: {err}", type="Skipped", non_retryable=True)
        if isinstance(err, TemporalError):
            return err
        return ApplicationError(f"interpreter error in workflow '{name}': {type(err).__name__}: {err}",
                                type="InterpreterError", non_retryable=True)

    @staticmethod
    def inputs(args: Sequence[RawValue]) -> dict[str, Any]:
        return decode_inputs(args)  # boundary: too deep, NaN or undecodable input fails the run at once

    async def load(self, name: str, continued: Continuation | None = None) -> tuple[Program, str, RuntimeConfig]:
        """Pin program, hash and config in history; record the hash in the memo.

        A continued run loads the program its first run pinned, and keeps that run's configuration.
        """
        pinned = continued.program_hash if continued is not None else workflow.memo_value(MEMO_PROGRAM_HASH, None)
        program, loaded = await load_pinned(name, pinned)
        config = RuntimeConfig.model_validate(continued.config if continued is not None else loaded.get("config") or {})
        self.describe(name, loaded["hash"], loaded.get("sources") or [], config)
        return program, loaded["hash"], config

    def describe(self, name: str, program_hash: str, sources: list[str], config: RuntimeConfig) -> None:
        """Memo, search attributes (where registered, as pinned in config) and the UI's details."""
        self.tracker.describe_run(short_name(name), program_details(name, program_hash, sources, namespace_of(name)))
        if not workflow.patched(RUN_METADATA_PATCH):
            if workflow.memo_value(MEMO_PROGRAM_HASH, None) != program_hash:
                workflow.upsert_memo({MEMO_PROGRAM_HASH: program_hash})
            return
        memo = run_memo(name, program_hash, sources)
        changed = {key: value for key, value in memo.items() if workflow.memo_value(key, None) != value}
        if changed:
            workflow.upsert_memo(changed)
        if config.search_attributes:
            workflow.upsert_search_attributes([SearchAttributeKey.for_keyword(key).value_set(value)
                                               for key, value in run_search_attributes(name, program_hash).items()])

    @workflow.query(name=STEPS_QUERY)
    def steps(self, query: Any = None) -> list[dict[str, Any]] | StepsPage:
        """Started steps (path, facet, state, returns once finished, error): a page, or the first 1,000.

        Without an argument, a plain list as before; a bad query is refused (interpreter.program.queries).
        """
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
            self.tracker.log("", f"{err.message}: refused")
            return
        self.signals.deliver(name, payload)

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

    @workflow.query(name=SIGNALS_QUERY)
    def signals_received(self) -> dict[str, Any]:
        """Every signal received (the newest 1,000) and what became of it; who waits on which name."""
        return self.signals.snapshot()

    # ------------------------------------------------------------------ mirror

    async def finish(self, flusher, name: str, state: str, params, returns, error, program_hash: str) -> None:
        """Record the runner's final state and wait until every mirror record is sent."""
        self.tracker.runner(name, state, params=params, returns=returns, error=error, program_hash=program_hash)
        await self.drain_mirror(flusher)

    async def drain_mirror(self, flusher) -> None:
        """Wait until every mirror record is sent (the run closes, or continues as new)."""
        if flusher is not None and not flusher.done():
            self.closing = True
            await flusher

    async def flush_mirror(self) -> None:
        """Send buffered records, one Mirror activity at a time; drain when the run closes."""
        while True:
            await workflow.wait_condition(lambda: bool(self.tracker.buffer) or self.closing)
            if not self.tracker.buffer and self.closing:
                return
            batch = self.tracker.take(MIRROR_BATCH, self.mirror_bytes)
            try:
                await workflow.execute_activity(MIRROR_ACTIVITY, batch, **self.options.mirror)
            except ActivityError as err:
                workflow.logger.warning("mirror batch of %d records dropped: %s", len(batch), err)
