"""One walk of a declaration's program tree, with one address for every block and step in it.

A declaration's bodies are its ``andThen`` blocks and its catch block; a
block holds steps, yields and (a when block) cases; a step holds its tail
blocks and its catch block, a case its body. ``walk`` visits all of them
depth first, in the order they are written: a block, then each of its steps
followed by everything inside that step, its yields, then each case followed
by its body. Everything that reads the tree whole — the facts
the compiler fills, where a block is (locate.py), what a body reads, the
scripts and their ids, the facets a program calls — reads it through here.

An ``Address`` is the declaration's qualified name and the segments down to
a node: ``b<i>`` the i-th ``andThen`` block (of the declaration or of a
step), ``s<j>`` the j-th step of a block, ``c<k>`` the k-th case of a when
block and its body, ``catch`` a catch's block, ``y<k>`` the k-th yield of a
block. Written out, ``shop.Checkout:b0/s1/b0`` —
the form child workflows are sent (locate.py), so it is part of recorded
histories and never changes.
"""

from __future__ import annotations

from collections.abc import Iterator

from .model import Block, Case, FacetDecl, Step, Yield


class Address(tuple[str, ...]):
    """Where a block or a step stands: its declaration and the segments from the declaration down to it.

    A tuple (``(decl, *segments)``), so making one per node of a large program stays cheap."""

    __slots__ = ()

    def __new__(cls, decl: str, *segments: str) -> Address:
        return tuple.__new__(cls, (decl, *segments))

    def __truediv__(self, segment: str) -> Address:
        return tuple.__new__(Address, (*self, segment))

    @property
    def decl(self) -> str:
        return self[0]

    @property
    def segments(self) -> tuple[str, ...]:
        return self[1:]

    @property
    def parent(self) -> Address:
        return tuple.__new__(Address, self[:-1]) if len(self) > 1 else self

    @property
    def last(self) -> str:
        return self[-1] if len(self) > 1 else ""

    def __str__(self) -> str:
        return f"{self[0]}:{'/'.join(self[1:])}"

    @classmethod
    def parse(cls, text: str) -> Address:
        """The address ``str`` wrote (``ns.F:b0/s1``)."""
        decl, _, path = text.partition(":")
        return cls(decl, *(path.split("/") if path else ()))

    def __repr__(self) -> str:
        return f"Address({str(self)!r})"


Node = Block | Step | Yield | Case


def walk(decl: FacetDecl) -> Iterator[tuple[Address, Node]]:
    """Every node of ``decl``'s bodies and catch, nested ones included, depth first as written."""
    top = Address(decl.qname)
    for index, block in enumerate(decl.blocks):
        yield from walk_block(block, top / f"b{index}")
    if decl.catch is not None:
        yield from walk_block(decl.catch.block, top / "catch")


def walk_block(block: Block, address: Address) -> Iterator[tuple[Address, Node]]:
    """``block`` at ``address`` and every node inside it, depth first as written."""
    yield address, block
    for index, step in enumerate(block.steps):
        at = address / f"s{index}"
        yield at, step
        for inner, tail in enumerate(step.blocks):
            yield from walk_block(tail, at / f"b{inner}")
        if step.catch is not None:
            yield from walk_block(step.catch.block, at / "catch")
    for index, item in enumerate(block.yields):
        yield address / f"y{index}", item
    for index, case in enumerate(block.cases):
        yield address / f"c{index}", case
        yield from walk_block(case.body, address / f"c{index}")


def blocks_of(decl: FacetDecl) -> Iterator[tuple[Address, Block]]:
    """Every block of ``decl``, with its address."""
    return ((address, node) for address, node in walk(decl) if isinstance(node, Block))


def steps_of(decl: FacetDecl) -> Iterator[Step]:
    """Every step of ``decl``: its bodies', its catch's, nested tails and cases included."""
    return (node for _, node in walk(decl) if isinstance(node, Step))
