"""What a block sees while it runs: step handles, scopes, and how yields merge into returns.

Plain data on the event loop (a Temporal workflow's, or a test's): nothing
here knows how a step's value was computed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from interpreter.program.evaluate import EvaluationError, StepValue

from .failures import Skipped

Write = tuple[str, dict[str, Any]]
"""One yield: (qualified target, fields) — merged later in deterministic order."""


class ScriptWrite(tuple):
    """An ``andThen script`` block's write: captured before the yields of its declaration or step."""

    __slots__ = ()


def join(path: str, part: str) -> str:
    return f"{path}/{part}" if path else part


def merge_into(returns: dict[str, Any], fields: dict[str, Any], owned: set[str] | None = None) -> None:
    """Apply one yield: lists concatenate, anything else overwrites.

    ``owned`` (kept by a caller merging many yields into one record) names the
    keys whose list this merge made: those are extended in place, so a foreach
    of n iterations yielding one item each merges in O(n), not O(n²). Any
    other list is copied first: it may be another step's value.
    """
    for key, value in fields.items():
        old = returns.get(key)
        if isinstance(old, list) and isinstance(value, list):
            if owned is not None and key in owned:
                old.extend(value)
            else:
                returns[key] = old + value
                if owned is not None:
                    owned.add(key)
        else:
            returns[key] = value
            if owned is not None:
                owned.discard(key)


def combined(writes: list[Write]) -> list[Write]:
    """Writes that merge (merge_into, one after another) into exactly what ``writes`` merge into.

    A parent holding a million iterations' yields from its child workflows keeps each chunk's
    as a few writes instead of a thousand: the values are the same objects, the key order the
    same, but the garbage collector no longer walks millions of small dicts in every worker task.
    Runs of consecutive writes to one target become one write (two when a key's lists follow a
    value that is not a list: that value must overwrite what came before them).
    """
    out: list[Write] = []
    start = 0
    while start < len(writes):
        target = writes[start][0]
        stop = start
        while stop < len(writes) and writes[stop][0] == target:
            stop += 1
        if stop - start == 1:
            out.append(writes[start])
        else:
            out.extend(combined_run(target, [fields for _, fields in writes[start:stop]]))
        start = stop
    return out


def combined_run(target: str, run: list[dict[str, Any]]) -> list[Write]:
    """One target's consecutive writes as one (or two) with the same effect."""
    first: dict[str, Any] = {}  # every key in order of first appearance: its lists, or its last other value
    tails: dict[str, list[Any]] = {}  # keys whose lists follow a value that is not a list
    for fields in run:
        for key, value in fields.items():
            if isinstance(value, list):
                if key in tails:
                    tails[key].extend(value)
                elif key in first and not isinstance(first[key], list):
                    tails[key] = list(value)
                elif key in first:
                    first[key].extend(value)
                else:
                    first[key] = list(value)
            else:
                first[key] = value
                tails.pop(key, None)
    return [(target, first), (target, tails)] if tails else [(target, first)]


class Handle:
    """A step's slot in its scope: awaited by exactly the steps that reference it.

    Its future is made only when a step waits before it settles: a continued run restores tens of
    thousands of completed steps' handles, which nobody waits for."""

    __slots__ = ("name", "declared", "nullable", "_waiters", "settled", "returns", "failed", "why")

    def __init__(self, name: str, declared: tuple[str, ...], nullable: tuple[str, ...] = ()):
        self.name = name
        self.declared = declared
        self.nullable = nullable  # fields that read as null when unset (error/error_type of a catchable step)
        self._waiters: asyncio.Future | None = None
        self.settled = False  # resolved or failed
        self.returns: dict[str, Any] | None = None
        self.failed = False
        self.why = "failed"

    @classmethod
    def resolved(cls, name: str, declared: tuple[str, ...], returns: dict[str, Any],
                 nullable: tuple[str, ...] = ()) -> Handle:
        handle = cls(name, declared, nullable)
        handle.resolve(returns)
        return handle

    def resolve(self, returns: dict[str, Any]) -> None:
        self.returns = returns
        self._settle()

    def fail(self, why: str = "failed") -> None:
        self.failed = True
        self.why = why
        self._settle()

    def _settle(self) -> None:
        if not self.settled:
            self.settled = True
            if self._waiters is not None:
                self._waiters.set_result(None)

    async def wait(self) -> dict[str, Any]:
        if not self.settled:  # a settled handle answers without yielding, as a done future would
            if self._waiters is None:
                self._waiters = asyncio.get_running_loop().create_future()
            await self._waiters
        if self.failed or self.returns is None:
            raise Skipped(f"step '{self.name}' {self.why}")
        return self.returns

    def value(self) -> StepValue:
        if self.returns is None:
            raise EvaluationError(f"step '{self.name}' has not completed")
        returns = self.returns
        if self.nullable and any(key not in returns for key in self.nullable):
            returns = {**dict.fromkeys(self.nullable), **returns}
        return StepValue(self.name, returns, self.declared)


class Scope:
    """Names visible to a block: its parameters and steps, then its parent's.

    ``names`` is the parent for step lookup (None at a declaration body);
    ``stops_with`` is the scope whose failure stops this scope's steps from
    starting (the caller's scope for an inlined body).
    """

    __slots__ = ("params", "path", "steps", "names", "stops_with", "failed", "script_target", "owner")

    def __init__(self, params: dict[str, Any], path: str, names: Scope | None, stops_with: Scope | None,
                 script_target: str, steps: dict[str, Handle] | None = None, owner: str | None = None):
        self.owner = owner  # path of the nearest enclosing step (None at the workflow's top level)
        self.params = params
        self.path = path
        self.steps: dict[str, Handle] = steps if steps is not None else {}
        self.names = names
        self.stops_with = stops_with
        self.failed = False
        self.script_target = script_target

    def child(self, path: str, params: dict[str, Any] | None = None,
              steps: dict[str, Handle] | None = None, script_target: str | None = None,
              owner: str | None = None) -> Scope:
        return Scope(self.params if params is None else params, path, self, self,
                     self.script_target if script_target is None else script_target, steps,
                     self.owner if owner is None else owner)

    def find(self, name: str) -> Handle:
        scope: Scope | None = self
        while scope is not None:
            handle = scope.steps.get(name)
            if handle is not None:
                return handle
            scope = scope.names
        raise EvaluationError(f"step '{name}' is not visible in '{self.path or 'the workflow'}'")

    def step_value(self, name: str) -> StepValue:
        return self.find(name).value()

    def fail(self) -> None:
        """Stop unstarted steps up to the enclosing step, the boundary where a catch may apply."""
        scope: Scope | None = self
        while scope is not None and scope.owner == self.owner:
            scope.failed = True
            scope = scope.stops_with

    def is_failed(self) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope.failed:
                return True
            scope = scope.stops_with
        return False

    def nesting(self) -> int:
        """How many steps enclose this scope: composed bodies, tails and catches on the way to the workflow."""
        depth = 0
        owner: object = object()
        current: Scope | None = self
        while current is not None:
            if current.owner != owner:
                owner = current.owner
                if owner is not None:
                    depth += 1
            current = current.stops_with
        return depth

    async def wait_for(self, refs: list[str] | tuple[str, ...]) -> None:
        """Wait for exactly the steps ``refs`` names; Skipped if one failed or the scope did."""
        for name in refs:
            await self.find(name).wait()
        if self.is_failed():
            raise Skipped(f"'{self.path}' stopped after a failure")
