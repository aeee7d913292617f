"""Fan-out through child workflows: a large foreach runs its iterations in chunks, one child workflow each.

Every history has its own buffer of events and its own replay cost, so a
foreach of more than ``RuntimeConfig.child_threshold`` iterations runs them
in child workflows of ``iterations_per_child``, at most
``children_in_flight`` at once (the next starts as one finishes). Each child
is the interpreter itself (the workflow type ``ffl.Iterations``, served by
the same dynamic workflow): it loads the run's program *pinned by hash*,
finds the foreach block by its address in the program, and runs its slice
of iterations exactly as the parent would — same step paths (a child's
steps sit under the parent's foreach path), same activity ids, same mirror
identity (the root run's workflow and run id) — and returns its
iterations' yields, in index order and compacted (``compacted``), or the
failure that stopped them. The parent merges the yields by index, so the
result is the one a single history gives; a failure fails (or is caught by)
the foreach's step with the same message. A child's
own foreach may fan out again (nested children). Cancelling the parent
cancels its children (they are awaited children, and close with it).

A child's id is ``<root workflow id>/<root run id>/<foreach path>/foreach[<first>-<last>]``
(trust.child_id; without the run id before Level.CHILD_RUN_IDS): a replayed or
continued parent finds (or, its memo holding the result, skips) the same
children, a run started again under the same workflow id never meets the
children of one terminated before, and ``ffl status`` can list them from the
parent's ``steps`` query, which names each child and its counts once it
finished.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from temporalio import workflow
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import CHUNK_WORKFLOW
    from interpreter.program.display import readable_path, shorten
    from interpreter.program.locate import block_address, body_reads, waits_for_signals
    from interpreter.program.model import Block
    from interpreter.semantics import Scope, Skipped, StepFailure, Write
    from interpreter.semantics.schedule import windowed
    from interpreter.semantics.scope import combined

from . import trust
from .chunks import SEQ_STRIDE, ChunkFailure, ChunkRequest, ChunkResult, OuterStep, chunk_key, read_params
from .continuation import Scale
from .memo import call_digest, reads_again
from .session import Session
from .tracker import Tracker


def chunk_summary(root: str, path: str, first: int, last: int) -> str:
    """The child's one-line summary in the Web UI: which iterations of which foreach it runs."""
    return shorten(f"foreach[{first}–{last}] · {readable_path(path, root)} › foreach", 200)


class Children:
    """The parent's side: chunks a foreach's iterations into child workflows, merges their yields by index."""

    def __init__(self, session: Session, tracker: Tracker, scale: Scale, seq_base: int = 0):
        self.session = session
        self.tracker = tracker
        self.scale = scale
        self.seq_base = seq_base
        self.running: set[asyncio.Task] = set()  # tasks awaiting a child workflow

    def wanted(self, block: Block, count: int) -> bool:
        """Past the threshold, unless the body waits for signals (those reach the run's own workflow only)."""
        return count > self.session.config.child_threshold and not waits_for_signals(self.session.program, block)

    async def run(self, block: Block, scope: Scope, items: list[Any]) -> list[list[Write]]:
        """All iterations of ``block`` over ``items``, in child workflows; their yields in index order."""
        session = self.session
        config = session.config
        reads = body_reads(session.program, block)
        await scope.wait_for(list(reads.outer_steps))  # the body's outer values travel with each chunk
        outer = []
        for name in reads.outer_steps:
            handle = scope.find(name)
            outer.append(OuterStep(name, dict(handle.returns or {}), list(handle.declared), list(handle.nullable)))
        size = config.iterations_per_child
        bounds = [(first, min(first + size, len(items))) for first in range(0, len(items), size)]
        place = self.tracker.places.get(scope.owner) if scope.owner is not None else None
        base = dict(workflow=session.workflow_name, program_hash=session.program_hash,
                    config=config.model_dump(mode="json"), root_id=session.workflow_id, root_run=session.run_id,
                    block=block_address(session.program, block), path=scope.path, owner=scope.owner,
                    script_target=scope.script_target, depth=session.rules.depth_base + scope.nesting(),
                    params=read_params(scope.params, reads.params), outer=outer,
                    owner_place=list(place) if place is not None else None, level=int(session.level),
                    parent_run=workflow.info().run_id)

        async def chunk(index: int) -> list[list[Write]]:
            first, stop = bounds[index]
            if scope.is_failed():
                raise Skipped(f"'{scope.path}' stopped after a failure")
            result = await self.start_child(ChunkRequest(**base, items=items[first:stop], first=first,
                                                         seq=self.seq_of(index)), first, stop - 1)
            if result.failure is not None:
                scope.fail()
                raise step_failure(result.failure)
            return [[(target, fields) for target, fields in writes] for writes in result.writes]

        try:
            results = await windowed(len(bounds), chunk, config.children_in_flight)
        except asyncio.CancelledError:
            # The run is cancelled: its children are asked to cancel too; wait until they have closed.
            await asyncio.gather(*self.running, return_exceptions=True)
            raise
        return [writes for chunk_writes in results for writes in chunk_writes]

    def seq_of(self, index: int) -> int:
        return (self.seq_base + (index + 1) * SEQ_STRIDE) % (1 << 42)

    async def start_child(self, request: ChunkRequest, first: int, last: int) -> ChunkResult:
        """One child (or its result from the memo): started once the run does not hold."""
        key = chunk_key(request.path, first, last)
        tracker = self.tracker
        memo = self.scale.memo
        hit = memo.get(key)
        digest = call_digest("foreach", [request.program_hash, request.items, request.params,
                                         [dataclasses.asdict(o) for o in request.outer]])
        if hit is not None and not isinstance(hit, ChunkResult) and (
                (hit.get("digest") or digest) != digest  # other iterations, outer values or program: again
                or hit.get("p") and reads_again(f"{request.path}/foreach/-", [o.name for o in request.outer],
                                                self.scale.again)):  # it reads a step that runs again
            hit = None
        child_id = trust.child_id(request.root_id, request.root_run, key, self.session.level)
        if hit is None:
            await self.scale.gate()
            self.scale.started[key] = child_id
            recover = self.scale.recovered_children.get(key)
            if recover:
                again = sorted(self.scale.again)  # the child's steps may read outer steps that run again
                request = dataclasses.replace(request, recover=list(recover), again=again)
            tracker.child(key, child_id, request.path, first, last, "running")
            task = asyncio.current_task()
            if task is not None:
                self.running.add(task)
            try:
                with self.scale.child_in_flight():
                    result = await workflow.execute_child_workflow(
                        CHUNK_WORKFLOW, request, id=child_id, task_queue=workflow.info().task_queue,
                        result_type=ChunkResult, id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                        parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
                        static_summary=chunk_summary(self.session.root, request.path, first, last),
                        static_details=f"iterations {first} to {last} of the foreach at `{request.path}` of "
                                       f"run `{request.root_id}`",
                    )
            except ChildWorkflowError as err:
                tracker.child(key, child_id, request.path, first, last, "failed")
                cause = err.cause
                message = getattr(cause, "message", None) or str(cause or err)
                raise StepFailure(join_foreach(request.path), "foreach",
                                  f"child workflow {child_id} failed: {message}",
                                  getattr(cause, "type", None) or type(cause or err).__name__) from err
            except WorkflowAlreadyStartedError:  # its id taken by an execution the run did not start
                tracker.child(key, child_id, request.path, first, last, "failed")
                raise StepFailure(join_foreach(request.path), "foreach", f"child workflow {child_id} cannot start: "
                                  "another execution holds its id", "WorkflowAlreadyStarted") from None
            finally:
                self.running.discard(task)
            result.digest, result.child_id = digest, child_id
            result.writes = compacted(result.writes)
            memo.put(key, result)
        else:
            result = hit if isinstance(hit, ChunkResult) else ChunkResult.restored(hit)
            result.writes = compacted(result.writes)
        state = "failed" if result.failure is not None else "completed"
        tracker.child(key, child_id, request.path, first, last, state, result.counts)
        return result


def compacted(iterations: list[list[list[Any]]]) -> list[list[list[Any]]]:
    """A chunk's yields, its iterations' in index order, as the few writes that merge the same (scope.combined).

    A child sends its chunk's yields so (since 0.2.0.dev6; the result's shape is not part of replay), and the
    parent compacts what older children sent: it keeps every chunk's until the foreach ends, and its memo
    carries them on.
    """
    writes = combined([(target, fields) for iteration in iterations for target, fields in iteration])
    return [[[target, fields] for target, fields in writes]] if writes else []


def chunk_failure(failure: StepFailure) -> ChunkFailure:
    """A child's failure as its result carries it to the parent."""
    return ChunkFailure(failure.path, failure.facet, failure.cause, failure.error_type,
                        [[path, facet] for path, facet in failure.within])


def step_failure(chunk: ChunkFailure) -> StepFailure:
    """A child's failure raised again in the parent, as the step failed in the child."""
    failure = StepFailure(chunk.path, chunk.facet, chunk.cause, chunk.error_type)
    for path, facet in chunk.within:
        failure.failed_within(path, facet)
    return failure


def join_foreach(path: str) -> str:
    return f"{path}/foreach" if path else "foreach"
