"""The update mechanics of the mirror: idempotent, monotonic upserts of one document, and sweeps of many.

A ``MirrorOp`` splits a document's fields by how they may change:

- ``set``: fields that never change (ids, names, paths, arguments) — always written;
- ``set_on_insert``: defaults for a new document;
- ``min``/``max``: timestamps that only move earlier (created, started) or later
  (updated, ping, completed) — so records may arrive in any order;
- ``guarded``: the state and what goes with it (returns, error), written only
  if the op's ``rank`` (and, on a tie, its time) is not older than what the
  document holds in ``_mirror`` (compared as one ``key``). A replayed "running" never overwrites
  "completed"; a task's rank includes its attempt, so attempt 2 "running" does
  overwrite attempt 1 "failed". A document without ``_mirror`` (one a dashboard
  button replaced) takes the next guarded update.

An op with ``upsert`` False only updates a document that exists: the state a
record implies for *another* document (a block's start puts its owner step in
its blocks' state) never creates a half-empty document.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MIRROR_FIELD = "_mirror"
"""Bookkeeping sub-document {rank, time, key} holding the guard of the last applied state."""

TIME_BITS = 42
"""Milliseconds below 2**42 (until the year 2109): ``key = rank << TIME_BITS | time`` orders (rank, time)."""

NO_KEY = -(1 << 62)
"""The key of a document no guarded update has reached yet."""


def guard_key(rank: int, time: int) -> int:
    """One number ordered as (rank, time): a guard is a single comparison, which every server answers from the
    ``_id`` index (an ``$or`` of rank and time made secantusdb scan the collection for every update)."""
    return (rank << TIME_BITS) + time


@dataclass
class MirrorOp:
    collection: str
    uuid: str
    set: dict[str, Any] = field(default_factory=dict)
    set_on_insert: dict[str, Any] = field(default_factory=dict)
    min: dict[str, Any] = field(default_factory=dict)
    max: dict[str, Any] = field(default_factory=dict)
    guarded: dict[str, Any] = field(default_factory=dict)
    rank: int | None = None
    time: int = 0
    upsert: bool = True

    many = False

    @property
    def insert_only(self) -> bool:
        """Only defaults for a new document: it can be inserted (a duplicate means it is there already)."""
        return self.upsert and self.rank is None and not (self.set or self.min or self.max or self.guarded)

    def updates(self) -> list[tuple[dict[str, Any], dict[str, Any], bool]]:
        """(filter, update, upsert) pairs: an ensuring upsert, then the guarded state update."""
        result: list[tuple[dict[str, Any], dict[str, Any], bool]] = []
        if self.upsert:
            taken = set(self.set) | set(self.min) | set(self.max) | set(self.guarded)
            on_insert = {k: v for k, v in self.set_on_insert.items() if k not in taken and not _overlaps(k, taken)}
            if self.rank is not None:
                on_insert[f"{MIRROR_FIELD}.rank"] = -1
                on_insert[f"{MIRROR_FIELD}.time"] = 0
                on_insert[f"{MIRROR_FIELD}.key"] = NO_KEY
            first: dict[str, Any] = {"$set": {"uuid": self.uuid, **self.set}}
            for operator, values in (("$setOnInsert", on_insert), ("$min", self.min), ("$max", self.max)):
                if values:
                    first[operator] = values
            result.append(({"_id": self.uuid}, first, True))
        elif self.set or self.min or self.max:
            first = {op: values for op, values in (("$set", self.set), ("$min", self.min), ("$max", self.max))
                     if values}  # fmt: skip
            result.append(({"_id": self.uuid}, first, False))
        if self.rank is not None:
            key = guard_key(self.rank, self.time)
            guard = {"_id": self.uuid, f"{MIRROR_FIELD}.key": {"$not": {"$gt": key}}}  # also: no key at all
            fields = {**self.guarded, f"{MIRROR_FIELD}.rank": self.rank, f"{MIRROR_FIELD}.time": self.time,
                      f"{MIRROR_FIELD}.key": key}  # fmt: skip
            result.append((guard, {"$set": fields}, False))
        return result

    def preview(self) -> dict[str, Any]:
        """The document this op alone would create in an empty collection (for tests and docs)."""
        doc: dict[str, Any] = {"_id": self.uuid}
        for _, update, _ in self.updates():
            for operator in ("$setOnInsert", "$set", "$min", "$max"):
                for key, value in update.get(operator, {}).items():
                    _put(doc, key, value)
        return doc


@dataclass
class MirrorSweep:
    """One update of every document matching ``filter`` (a run's end closing what it left open)."""

    collection: str
    filter: dict[str, Any]
    update: dict[str, Any]

    many = True
    insert_only = False

    def updates(self) -> list[tuple[dict[str, Any], dict[str, Any], bool]]:
        return [(self.filter, self.update, False)]


def _overlaps(key: str, taken: set[str]) -> bool:
    return any(key.startswith(t + ".") or t.startswith(key + ".") for t in taken)


def _put(doc: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        doc = doc.setdefault(part, {})
    doc[last] = value
