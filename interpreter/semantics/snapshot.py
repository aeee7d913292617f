"""What a run has completed, kept so that a run continued as new restores it instead of re-running it.

The interpreter records each *unit* it completes — a step (its returns and
the yields its tail made to outer targets), a foreach iteration and a block
(their yields) — under its path. A continued run's interpreter asks before it
runs one: a completed block or iteration gives its yields at once, a
completed step resolves its handle, and none of them runs, reports or calls
anything again. So a continued run does work in proportion to what is still
open, not to the logical run's past.

What is carried is only what is still needed: once a unit completes, the
records inside it go (its own record holds everything its enclosing block can
still ask of it), and when the run is carried a completed step keeps its
returns only while a step, yield or block of its block that has not completed
reads it; the others keep just their place. Plain data in and out (``carried``
/ ``Snapshot(carried)``), deterministic: insertion-ordered dicts, no sets
iterated.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from interpreter.program.model import Block, Step

from .scope import ScriptWrite, Write


@dataclass
class StepOutcome:
    """A completed step: its returns (None once nothing still open reads them), the yields its tail made to
    enclosing targets, and the returns of inner steps read from outside it (``Step.reaches``)."""

    returns: dict[str, Any] | None
    writes: list[Write] = field(default_factory=list)
    reached: dict[str, dict[str, Any]] | None = None


@dataclass
class BlockState:
    """The completed steps of one block instance (a block path), by position; ``block`` once this run saw it."""

    outcomes: dict[int, StepOutcome] = field(default_factory=dict)
    done: list[list[int]] = field(default_factory=list)
    """Ranges ``[first, last]`` of steps completed in an earlier run whose returns nothing needed any more."""
    block: Block | None = None

    def completed(self, index: int) -> bool:
        return index in self.outcomes or any(first <= index <= last for first, last in self.done)

    def completed_indices(self, count: int) -> list[int]:
        """The completed positions among a block's ``count`` steps, in order: one pass over the ranges, since
        a continued run restores a long block's tens of thousands of steps on every replay."""
        mask = bytearray(count)
        for first, last in self.done:
            stop = min(last + 1, count)
            if first < stop:
                mask[first:stop] = b"\x01" * (stop - first)
        for index in self.outcomes:
            if 0 <= index < count:
                mask[index] = 1
        return list(itertools.compress(range(count), mask))


class Snapshot:
    """Completed units by path: block instances' steps (``blocks``) and completed blocks and iterations
    (``units``: their yields)."""

    def __init__(self, carried: dict[str, Any] | None = None):
        self.blocks: dict[str, BlockState] = {}
        self.units: dict[str, list[Write]] = {}
        self._under: dict[str, list[str]] = {}  # parent path → recorded paths under it (to drop them)
        self.seen_blocks: set[int] = set()  # ids of blocks whose steps a sibling block reads (kept with them)
        # Per run, so keyed by id() of objects of the one program this run holds:
        self._reads: dict[int, frozenset[str]] = {}
        self._positions: dict[int, dict[str, int]] = {}
        for path, writes in (carried or {}).get("units", {}).items():
            self._add_unit(path, [decode_write(w) for w in writes])
        for path, state in (carried or {}).get("blocks", {}).items():
            outcomes = {int(index): StepOutcome(entry[0], [decode_write(w) for w in entry[1]], entry[2])
                        for index, entry in state.get("kept", {}).items()}
            self._state(path).outcomes.update(outcomes)
            self.blocks[path].done = [list(r) for r in state.get("done", [])]

    # ------------------------------------------------------------------ asked while interpreting

    def unit(self, path: str) -> list[Write] | None:
        """The yields of a completed block or iteration at ``path``, or None when it must run."""
        return self.units.get(path)

    def block(self, path: str, block: Block) -> BlockState | None:
        """The completed steps of the block instance at ``path`` (None when none completed), now tied to
        ``block`` so that carrying it can tell which returns are still read."""
        state = self.blocks.get(path)
        if state is not None:
            state.block = block
        return state

    # ------------------------------------------------------------------ told as units complete

    def step_done(self, block_path: str, index: int, outcome: StepOutcome, step_path: str,
                  block: Block) -> None:
        """A step completed: its record replaces everything recorded inside it."""
        self._drop_under(step_path)
        state = self._state(block_path)
        state.block = block
        state.outcomes[index] = outcome

    def unit_done(self, path: str, writes: list[Write]) -> None:
        """A block or an iteration completed: its yields replace its steps' records (unless a sibling block
        reads its steps: then they stay beside it)."""
        state = self.blocks.get(path)
        keep = state is not None and id(state.block) in self.seen_blocks
        self._drop_under(path)
        if not keep:
            self.blocks.pop(path, None)
        self._add_unit(path, writes)

    def covers(self, path: str) -> bool:
        """Whether ``path`` (a memo key: a step, script, built-in or chunk) is inside a completed unit or is a
        completed step: the snapshot answers for it, so a memo entry for it need not be carried."""
        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            if prefix in self.units:
                return True
            state = self.blocks.get("/".join(parts[:end - 1]))
            if state is not None and state.block is not None:
                index = self.positions(state.block).get(parts[end - 1])
                if index is not None and state.completed(index):
                    return True
        return False

    # ------------------------------------------------------------------ carried

    def carried(self) -> dict[str, Any]:
        """The JSON form continue-as-new carries: every unit, and per open block the returns still read."""
        blocks: dict[str, Any] = {}
        for path, state in self.blocks.items():
            needed = None if id(state.block) in self.seen_blocks else self.still_read(state)
            kept: dict[str, Any] = {}
            done = [list(r) for r in state.done]
            for index, outcome in sorted(state.outcomes.items()):
                name = state.block.steps[index].name if state.block is not None else None
                keep = needed is None or name in needed
                reached = {n: v for n, v in (outcome.reached or {}).items() if needed is None or n in needed}
                if keep or outcome.writes or reached:
                    kept[str(index)] = [outcome.returns if keep else None,
                                        [encode_write(w) for w in outcome.writes], reached or None]
                else:
                    _extend(done, index)
            blocks[path] = {"kept": kept, "done": done}
        return {"units": {path: [encode_write(w) for w in writes] for path, writes in self.units.items()},
                "blocks": blocks}

    # ------------------------------------------------------------------ what is still read

    def still_read(self, state: BlockState) -> frozenset[str] | None:
        """Names of the block's steps that its open steps and its yields read; None when it cannot be told
        (the block was not seen in this run): then every value is kept."""
        block = state.block
        if block is None:
            return None
        names: list[str] = [name for item in block.yields for name in item.refs]
        for index, step in enumerate(block.steps):
            if not state.completed(index):
                names.extend(self.reads_of(step))
        return frozenset(names)

    def reads_of(self, step: Step) -> frozenset[str]:
        """Every step name ``step`` reads: its arguments and anything in its andThen blocks and catch."""
        found = self._reads.get(id(step))
        if found is None:
            names: list[str] = list(step.refs)
            for block in step.blocks:
                names.extend(self.block_reads(block))
            if step.catch is not None:
                names.extend(self.block_reads(step.catch.block))
            found = self._reads[id(step)] = frozenset(names)
        return found

    def block_reads(self, block: Block) -> list[str]:
        names: list[str] = list(block.items_refs)
        for step in block.steps:
            names.extend(self.reads_of(step))
        for item in block.yields:
            names.extend(item.refs)
        for case in block.cases:
            names.extend(case.refs)
            names.extend(self.block_reads(case.body))
        return names

    def positions(self, block: Block) -> dict[str, int]:
        found = self._positions.get(id(block))
        if found is None:
            found = self._positions[id(block)] = {step.name: index for index, step in enumerate(block.steps)}
        return found

    # ------------------------------------------------------------------ bookkeeping

    def _state(self, path: str) -> BlockState:
        state = self.blocks.get(path)
        if state is None:
            state = self.blocks[path] = BlockState()
            self._under.setdefault(_parent(path), []).append(path)
        return state

    def _add_unit(self, path: str, writes: list[Write]) -> None:
        if path not in self.units:
            self._under.setdefault(_parent(path), []).append(path)
        self.units[path] = writes

    def _drop_under(self, path: str) -> None:
        for inner in self._under.pop(path, ()):
            self.blocks.pop(inner, None)
            self.units.pop(inner, None)
            self._drop_under(inner)


def _parent(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _extend(ranges: list[list[int]], index: int) -> None:
    """Add ``index`` to sorted ranges (indexes arrive in increasing order)."""
    if ranges and ranges[-1][1] == index - 1:
        ranges[-1][1] = index
    else:
        ranges.append([index, index])


def encode_write(write: Write) -> list[Any]:
    target, fields = write
    return [target, fields, 1] if isinstance(write, ScriptWrite) else [target, fields]


def decode_write(data: list[Any]) -> Write:
    write = (data[0], data[1])
    return ScriptWrite(write) if len(data) > 2 and data[2] else write
