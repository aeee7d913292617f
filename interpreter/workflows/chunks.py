"""What a parent and its child workflows send each other: plain data, converted by the SDK.

A child runs iterations ``first .. first + len(items) - 1`` of one foreach
(children.py); it is sent its slice of the list, the parameters its body
reads and the outer steps' values, and answers each iteration's yields in
index order, or the failure that stopped it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    level: int = 3  # the parent's features.Level (requests of 0.2.0.dev2 carry none: SCALE)
    parent_run: str = ""  # the run starting the child: checked against Temporal's parent (trust.py)
    recover: list[str] = field(default_factory=list)  # a resumed run's: [workflow id, run id] of the closed child
    # whose completed iterations this one keeps (resume.py), and the paths in it to run again
    again: list[str] = field(default_factory=list)


@dataclass
class ChunkFailure:
    path: str
    facet: str
    cause: str
    error_type: str
    within: list[list[str]] = field(default_factory=list)


@dataclass
class ChunkResult:
    """Each iteration's yields in index order, or the failure that stopped the chunk; the chunk's step counts."""

    writes: list[list[list[Any]]] = field(default_factory=list)
    failure: ChunkFailure | None = None
    counts: dict[str, int] = field(default_factory=dict)
    digest: str = ""  # set by the parent: what the child was asked (memo.call_digest), so a resumed run checks it
    run: str = ""  # the child's last run id, so a run moved to another program can recover its iterations
    child_id: str = ""  # set by the parent: the child's workflow id, likewise

    @classmethod
    def restored(cls, data: dict[str, Any]) -> ChunkResult:
        """A result carried in a continued run's memo (plain JSON there)."""
        failure = data.get("failure")
        return cls(writes=data.get("writes") or [], failure=ChunkFailure(**failure) if failure else None,
                   counts=dict(data.get("counts") or {}), digest=str(data.get("digest") or ""),
                   run=str(data.get("run") or ""), child_id=str(data.get("child_id") or ""))


def chunk_key(path: str, first: int, last: int) -> str:
    """The memo key of a chunk, and the tail of its child's workflow id."""
    return f"{path}/foreach[{first}-{last}]"


def read_params(params: dict[str, Any], names: tuple[str, ...] | None) -> dict[str, Any]:
    """The parameters a child's iterations read (all of them for a body with a script block).

    A foreach over a parameter's list must not send the whole list to every child: storage and
    conversion time would grow with the square of the list.
    """
    if names is None:
        return params
    return {name: params[name] for name in params if name in names}


