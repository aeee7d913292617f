"""Where a block is in a program, and what its body reads from outside: what a child workflow needs.

A foreach whose iterations run in child workflows hands each child the
block's *address* (the child loads the same pinned program and finds the
block there) and the values of the outer steps the body reads. Both are
derived from the compiled program alone, deterministically, and cached per
program object (programs are never mutated once built).

Address: ``<declaration>:<segments>``, segments joined by ``/``: ``b<i>`` an
andThen block (of a declaration or of a step's tail), ``s<j>`` a step of a
block, ``c<k>`` a case of a when block, ``catch`` a catch's block; e.g.
``shop.Checkout:b0/s1/b0`` is the tail block of the second step of the
workflow's first block.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from .builtins import WAIT_FOR_SIGNAL
from .model import Block, FacetDecl, Program, Step


class BlockNotFound(LookupError):
    """An address that names no block of the program (a program other than the one the address was made in)."""


@dataclass(frozen=True)
class BodyReads:
    """What a block's body reads from outside it: step names and ``$.`` names (in first-use order).

    ``params`` is None when the body holds a script block, which sees every parameter.
    """

    outer_steps: tuple[str, ...]
    params: tuple[str, ...] | None


@dataclass
class _Index:
    addresses: dict[int, str]  # id(block) → address
    blocks: dict[str, Block]
    reads: dict[int, BodyReads]
    signals: dict[int, bool]


_CACHE_SIZE = 8
_cache: OrderedDict[int, tuple[Program, _Index]] = OrderedDict()
_lock = threading.Lock()  # workflow activations run on several threads


def _step_blocks(step: Step, prefix: str) -> Iterator[tuple[str, Block]]:
    for index, block in enumerate(step.blocks):
        yield from _blocks(block, f"{prefix}/b{index}")
    if step.catch is not None:
        yield from _blocks(step.catch.block, f"{prefix}/catch")


def _blocks(block: Block, address: str) -> Iterator[tuple[str, Block]]:
    """``block`` at ``address`` and every block nested in it, depth first."""
    yield address, block
    for index, step in enumerate(block.steps):
        yield from _step_blocks(step, f"{address}/s{index}")
    for index, case in enumerate(block.cases):
        yield from _blocks(case.body, f"{address}/c{index}")


def _decl_blocks(decl: FacetDecl) -> Iterator[tuple[str, Block]]:
    for index, block in enumerate(decl.blocks):
        yield from _blocks(block, f"{decl.qname}:b{index}")
    if decl.catch is not None:
        yield from _blocks(decl.catch.block, f"{decl.qname}:catch")


def _index(program: Program) -> _Index:
    key = id(program)
    with _lock:
        found = _cache.get(key)
        if found is not None and found[0] is program:
            _cache.move_to_end(key)
            return found[1]
    index = _Index({}, {}, {}, {})
    for qname in sorted(program.facets):
        for address, block in _decl_blocks(program.facets[qname]):
            index.addresses[id(block)] = address
            index.blocks[address] = block
    with _lock:
        _cache[key] = (program, index)  # the program is held, so its id is not reused while cached
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return index


def block_address(program: Program, block: Block) -> str:
    """The address of ``block`` (an object of ``program``)."""
    address = _index(program).addresses.get(id(block))
    if address is None:
        raise BlockNotFound("block is not part of this program")
    return address


def find_block(program: Program, address: str) -> Block:
    block = _index(program).blocks.get(address)
    if block is None:
        raise BlockNotFound(f"the program has no block at {address!r}")
    return block


@dataclass
class _Reads:
    steps: list[str]
    params: list[str]
    defined: set[str]
    scripted: bool = False


def _body_refs(block: Block, reads: _Reads) -> None:
    reads.steps.extend(block.items_refs)
    reads.params.extend(block.items_params)
    reads.scripted = reads.scripted or block.kind == "script"
    for step in block.steps:
        reads.defined.add(step.name)
        reads.steps.extend(step.refs)
        reads.params.extend(step.params)
        for inner in step.blocks:
            _body_refs(inner, reads)
        if step.catch is not None:
            _body_refs(step.catch.block, reads)
    for item in block.yields:
        reads.steps.extend(item.refs)
        reads.params.extend(item.params)
    for case in block.cases:
        reads.steps.extend(case.refs)
        reads.params.extend(case.params)
        _body_refs(case.body, reads)


def body_reads(program: Program, block: Block) -> BodyReads:
    """The steps and parameters outside ``block`` that its body (iterations, nested blocks, tails, catches) reads.

    A foreach's own list is evaluated before the iterations and is not part of its body: a child
    workflow gets its slice of the list, never the list itself.
    """
    index = _index(program)
    found = index.reads.get(id(block))
    if found is not None:
        return found
    collected = _Reads([], [], {step.name for step in block.steps})
    _body_refs(block.model_copy(update={"items_refs": [], "items_params": []}), collected)
    reads = BodyReads(tuple(name for name in dict.fromkeys(collected.steps) if name not in collected.defined),
                      None if collected.scripted else tuple(dict.fromkeys(collected.params)))
    index.reads[id(block)] = reads
    return reads


def _all_blocks(block: Block) -> Iterator[Block]:
    yield from (found for _, found in _blocks(block, ""))


def waits_for_signals(program: Program, block: Block) -> bool:
    """Whether running ``block`` may reach an ``ffl.WaitForSignal``, directly or in a facet it calls.

    Signals go to the run's own workflow, so such a foreach keeps its iterations in the run's history
    instead of child workflows, which would never see them.
    """
    index = _index(program)
    found = index.signals.get(id(block))
    if found is not None:
        return found
    seen: set[str] = set()
    pending = [block]
    result = False
    while pending and not result:
        for inner in _all_blocks(pending.pop()):
            for step in inner.steps:
                facet = step.call.facet
                if step.call.kind == "builtin" and facet == WAIT_FOR_SIGNAL:
                    result = True
                elif facet and facet not in seen and facet in program.facets:
                    seen.add(facet)
                    decl = program.facets[facet]
                    pending.extend(decl.blocks)
                    if decl.catch is not None:
                        pending.append(decl.catch.block)
    index.signals[id(block)] = result
    return result
