"""Where a block is in a program, and what its body reads from outside: what a child workflow needs.

A foreach whose iterations run in child workflows hands each child the
block's *address* (the child loads the same pinned program and finds the
block there) and the values of the outer steps the body reads. Both are
derived from the compiled program alone, deterministically, and cached per
program object (programs are never mutated once built).

The address is walk.py's ``Address`` written out (``shop.Checkout:b0/s1/b0``
is the tail block of the second step of the workflow's first block).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from .builtins import WAIT_FOR_SIGNAL
from .model import Block, Program, Step
from .walk import Address, blocks_of, walk, walk_block


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
    addresses: dict[int, Address]  # id(block) → address
    blocks: dict[Address, Block]
    reads: dict[int, BodyReads]
    signals: dict[int, bool]


_CACHE_SIZE = 8
_cache: OrderedDict[int, tuple[Program, _Index]] = OrderedDict()
_lock = threading.Lock()  # workflow activations run on several threads


def _index(program: Program) -> _Index:
    key = id(program)
    with _lock:
        found = _cache.get(key)
        if found is not None and found[0] is program:
            _cache.move_to_end(key)
            return found[1]
    index = _Index({}, {}, {}, {})
    for qname in sorted(program.facets):
        for address, block in blocks_of(program.facets[qname]):
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
    return str(address)


def find_block(program: Program, address: str) -> Block:
    block = _index(program).blocks.get(Address.parse(address))
    if block is None:
        raise BlockNotFound(f"the program has no block at {address!r}")
    return block


def body_reads(program: Program, block: Block) -> BodyReads:
    """The steps and parameters outside ``block`` that its body (iterations, nested blocks, tails, catches) reads.

    A foreach's own list is evaluated before the iterations and is not part of its body: a child
    workflow gets its slice of the list, never the list itself.
    """
    index = _index(program)
    found = index.reads.get(id(block))
    if found is not None:
        return found
    steps: list[str] = []
    params: list[str] = []
    defined: set[str] = set()
    scripted = False
    for _, node in walk_block(block, _ANYWHERE):
        if isinstance(node, Block):
            scripted = scripted or node.kind == "script"
            if node is not block:  # the foreach's own list is read before its iterations
                steps.extend(node.items_refs)
                params.extend(node.items_params)
            continue
        if isinstance(node, Step):
            defined.add(node.name)
        steps.extend(node.refs)
        params.extend(node.params)
    reads = BodyReads(tuple(name for name in dict.fromkeys(steps) if name not in defined),
                      None if scripted else tuple(dict.fromkeys(params)))
    index.reads[id(block)] = reads
    return reads


_ANYWHERE = Address("")
"""The address a walk below a block starts from where the addresses themselves are not read."""


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
    pending = [walk_block(block, _ANYWHERE)]
    result = False
    while pending and not result:
        for _, step in pending.pop():
            if not isinstance(step, Step):
                continue
            facet = step.call.facet
            if step.call.kind == "builtin" and facet == WAIT_FOR_SIGNAL:
                result = True
            elif facet and facet not in seen and facet in program.facets:
                seen.add(facet)
                pending.append(walk(program.facets[facet]))
    index.signals[id(block)] = result
    return result
