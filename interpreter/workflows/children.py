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
identity (the root run's workflow and run id) — and returns each
iteration's yields, or the failure that stopped them. The parent merges the
yields by index, so the result is the one a single history gives; a failure
fails (or is caught by) the foreach's step with the same message. A child's
own foreach may fan out again (nested children). Cancelling the parent
cancels its children (they are awaited children, and close with it).

A child's id is ``<root workflow id>/<root run id>/<foreach path>/foreach[<first>-<last>]``
(trust.child_id; without the run id before CHILD_IDS_PATCH): a replayed or
continued parent finds (or, its memo holding the result, skips) the same
children, a run started again under the same workflow id never meets the
children of one terminated before, and ``ffl status`` can list them from the
parent's ``steps`` query, which names each child and its counts once it
finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.common import RawValue, WorkflowIDReusePolicy
from temporalio.exceptions import ChildWorkflowError, WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.constants import CHUNK_WORKFLOW
    from interpreter.program.display import readable_path, short_name, shorten
    from interpreter.program.locate import block_address, body_reads, find_block, waits_for_signals
    from interpreter.program.model import Block

from . import trust
from .boundaries import nesting
from .builtins import Builtins
from .cancellation import CONTROL_PATCH
from .continuation import MIRROR_BATCH_BYTES_BY_REFERENCE, Scale
from .loading import load_pinned
from .options import ActivityOptions
from .schedule import windowed
from .state import Handle, Scope, Skipped, StepFailure, Write

if TYPE_CHECKING:
    from .runner import Interpreter

SEQ_STRIDE = 1_000_000
"""Mirror record numbers one child may use before the next child's (they order the mirror's log entries)."""


@dataclass
class OuterStep:
    """A completed step outside the foreach that its body reads: what the child's scope needs of it."""

    name: str
    returns: dict[str, Any]
    declared: list[str] = field(default_factory=list)
    nullable: list[str] = field(default_factory=list)


@dataclass
class ChunkRequest:
    """Everything a child needs to run iterations ``first .. first + len(items) - 1`` of one foreach."""

    workflow: str  # the root FFL workflow (its program is loaded, pinned by hash)
    program_hash: str
    config: dict[str, Any]
    root_id: str  # the logical run's identity, for mirror records and grandchildren's ids
    root_run: str
    block: str  # the foreach block's address in the program (program.locate)
    path: str  # the foreach's scope path: iterations are <path>/foreach[<index>]
    owner: str | None
    script_target: str
    depth: int  # steps enclosing the foreach (the nesting bound counts on from there)
    params: dict[str, Any]
    outer: list[OuterStep]
    items: list[Any]
    first: int
    seq: int = 0
    owner_place: list[Any] | None = None  # the owner step's mirror place (parent, block, root)
    parent_run: str = ""  # the run starting the child: checked against Temporal's parent (trust.py)


@dataclass
class ChunkFailure:
    path: str
    facet: str
    cause: str
    error_type: str
    within: list[list[str]] = field(default_factory=list)

    @classmethod
    def of(cls, failure: StepFailure) -> ChunkFailure:
        return cls(failure.path, failure.facet, failure.cause, failure.error_type,
                   [[path, facet] for path, facet in failure.within])

    def raised(self) -> StepFailure:
        failure = StepFailure(self.path, self.facet, self.cause, self.error_type)
        for path, facet in self.within:
            failure.failed_within(path, facet)
        return failure


@dataclass
class ChunkResult:
    """Each iteration's yields in index order, or the failure that stopped the chunk; the chunk's step counts."""

    writes: list[list[list[Any]]] = field(default_factory=list)
    failure: ChunkFailure | None = None
    counts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def restored(cls, data: dict[str, Any]) -> ChunkResult:
        """A result carried in a continued run's memo (plain JSON there)."""
        failure = data.get("failure")
        return cls(writes=data.get("writes") or [], failure=ChunkFailure(**failure) if failure else None,
                   counts=dict(data.get("counts") or {}))


def chunk_key(path: str, first: int, last: int) -> str:
    """The memo key of a chunk, and the tail of its child's workflow id."""
    return f"{path}/foreach[{first}-{last}]"


def chunk_summary(root: str, path: str, first: int, last: int) -> str:
    """The child's one-line summary in the Web UI: which iterations of which foreach it runs."""
    return shorten(f"foreach[{first}–{last}] · {readable_path(path, root)} › foreach", 200)


class Children:
    """The parent's side: chunks a foreach's iterations into child workflows, merges their yields by index."""

    def __init__(self, interpreter: Interpreter, scale: Scale, seq_base: int = 0):
        self.interpreter = interpreter
        self.scale = scale
        self.seq_base = seq_base
        self.running: set[asyncio.Task] = set()  # tasks awaiting a child workflow

    def wanted(self, block: Block, count: int) -> bool:
        """Past the threshold, unless the body waits for signals (those reach the run's own workflow only)."""
        return count > self.interpreter.config.child_threshold and not waits_for_signals(
            self.interpreter.program, block)

    async def run(self, block: Block, scope: Scope, items: list[Any]) -> list[list[Write]]:
        """All iterations of ``block`` over ``items``, in child workflows; their yields in index order."""
        interpreter = self.interpreter
        config = interpreter.config
        reads = body_reads(interpreter.program, block)
        await scope.wait_for(list(reads.outer_steps))  # the body's outer values travel with each chunk
        outer = []
        for name in reads.outer_steps:
            handle = scope.find(name)
            outer.append(OuterStep(name, dict(handle.returns or {}), list(handle.declared), list(handle.nullable)))
        size = config.iterations_per_child
        bounds = [(first, min(first + size, len(items))) for first in range(0, len(items), size)]
        address = block_address(interpreter.program, block)
        tracker = interpreter.tracker
        place = tracker.places.get(scope.owner) if scope.owner is not None else None
        base = dict(workflow=tracker.workflow_name, program_hash=tracker.program_hash,
                    config=config.model_dump(mode="json"), root_id=tracker.workflow_id, root_run=tracker.run_id,
                    block=address, path=scope.path, owner=scope.owner, script_target=scope.script_target,
                    depth=interpreter.depth_base + nesting(scope), params=scope.params, outer=outer,
                    owner_place=list(place) if place is not None else None, parent_run=workflow.info().run_id)

        async def chunk(index: int) -> list[list[Write]]:
            first, stop = bounds[index]
            if scope.is_failed():
                raise Skipped(f"'{scope.path}' stopped after a failure")
            result = await self.run_chunk(ChunkRequest(**base, items=items[first:stop], first=first,
                                                       seq=self.seq_of(index)), first, stop - 1)
            if result.failure is not None:
                scope.fail()
                raise result.failure.raised()
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

    async def run_chunk(self, request: ChunkRequest, first: int, last: int) -> ChunkResult:
        """One child (or its result from the memo): started once the run does not hold."""
        key = chunk_key(request.path, first, last)
        tracker = self.interpreter.tracker
        memo = self.scale.memo
        hit = memo.get(key)
        if hit is None:
            await self.scale.gate()
            child_id = trust.child_id(request.root_id, request.root_run, key)
            tracker.child(key, child_id, request.path, first, last, "running")
            self.scale.children += 1
            task = asyncio.current_task()
            if task is not None:
                self.running.add(task)
            try:
                result = await workflow.execute_child_workflow(
                    CHUNK_WORKFLOW, request, id=child_id, task_queue=workflow.info().task_queue,
                    result_type=ChunkResult, id_reuse_policy=WorkflowIDReusePolicy.ALLOW_DUPLICATE,
                    parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
                    static_summary=chunk_summary(self.interpreter.root, request.path, first, last),
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
                self.scale.children -= 1
                self.running.discard(task)
            memo.put(key, result)
        else:
            result = hit if isinstance(hit, ChunkResult) else ChunkResult.restored(hit)
            child_id = trust.child_id(request.root_id, request.root_run, key)
        state = "failed" if result.failure is not None else "completed"
        tracker.child(key, child_id, request.path, first, last, state, result.counts)
        return result


def join_foreach(path: str) -> str:
    return f"{path}/foreach" if path else "foreach"


# ---------------------------------------------------------------------- the child's side


async def run_chunk(host, args: Sequence[RawValue]) -> ChunkResult:
    """The child workflow: iterations of one foreach, in a history of their own.

    ``host`` is the FFLWorkflow instance (its tracker answers the steps query;
    its mirror flusher sends the records).
    """
    from .runner import Interpreter  # the runner imports this module

    request = trust.chunk_request(args, ChunkRequest)  # trust boundary: from a parent of its own run only
    continued = trust.continuation(args, root=False)
    tracker = host.tracker
    tracker.bind(request.root_id, request.root_run)
    tracker.workflow_name = request.workflow
    tracker.program_hash = request.program_hash
    tracker.seq = continued.seq if continued is not None else request.seq
    program, _ = await load_pinned(request.workflow, request.program_hash)
    config = RuntimeConfig.model_validate(request.config)
    control = workflow.patched(CONTROL_PATCH)  # a child is always started by a release with durable control
    host.control = control
    host.options = ActivityOptions(program, config, workflow.info().task_queue, control)
    tracker.mirror = config.mirror
    tracker.describe_run(short_name(request.workflow),
                         f"**FFL** iterations {request.first} to {request.first + len(request.items) - 1} of "
                         f"`{request.path}` in run `{request.root_id}`")
    if request.owner is not None and request.owner_place is not None:
        tracker.places[request.owner] = tuple(request.owner_place)
    tracker.blocks.add(request.path)
    block = find_block(program, request.block)
    host.mirror_bytes = MIRROR_BATCH_BYTES_BY_REFERENCE
    flusher = asyncio.create_task(host.flush_mirror()) if config.mirror else None
    scale = Scale(config.continue_after_events, continued)
    interpreter = Interpreter(program, config, tracker, host.options,
                              Builtins(host.signals, tracker) if control else None, scale=scale, seq_base=request.seq)
    interpreter.root = short_name(request.workflow)
    interpreter.depth_base = request.depth
    handles = {o.name: Handle.resolved(o.name, tuple(o.declared), o.returns, tuple(o.nullable))
               for o in request.outer}
    scope = Scope(request.params, request.path, None, None, request.script_target, handles, request.owner)
    indexes = range(request.first, request.first + len(request.items))
    result = ChunkResult()
    try:
        done, writes = await scale.run(interpreter.run_iterations(block, scope, request.items, indexes))
        if not done:
            await host.drain_mirror(flusher)
            workflow.continue_as_new(args=[request, scale.carry(tracker.seq, request.root_run, request.program_hash,
                                                                request.config)])
        result.writes = [[list(write) for write in iteration] for iteration in writes]
    except StepFailure as failure:
        result.failure = ChunkFailure.of(failure)
    except Skipped as skipped:  # nothing outside the chunk can fail; kept for completeness of the contract
        result.failure = ChunkFailure(request.path, "foreach", str(skipped), "Skipped")
    result.counts = tracker.totals()
    await host.drain_mirror(flusher)
    return result

