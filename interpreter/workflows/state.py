"""Run-time state of an interpretation: step handles, scopes, failures and yield merging.

Everything here is plain data driven by the workflow's event loop; nothing
touches Temporal, so the rules are easy to read and to test.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, TimeoutError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.evaluate import EvaluationError, StepValue

Write = tuple[str, dict[str, Any]]
"""One yield: (qualified target, fields) — merged later in deterministic order."""

_failure_seq = itertools.count()


class StepFailure(Exception):
    """A step failed and nothing caught it; names the innermost failing step.

    ``seq`` orders failures by when they happened (deterministic under
    Temporal), so the first real failure is the one reported.
    """

    def __init__(self, path: str, facet: str, cause: str, error_type: str):
        self.path, self.facet, self.cause, self.error_type = path, facet, cause, error_type
        self.seq = next(_failure_seq)
        self.within: list[tuple[str, str]] = []  # enclosing steps it failed, innermost first
        super().__init__(path, facet, cause, error_type)

    def failed_within(self, path: str, facet: str) -> None:
        """Record an enclosing (composed) step this failure also fails, so the message names it."""
        if path != self.path and (path, facet) not in self.within:
            self.within.append((path, facet))

    def __str__(self) -> str:
        text = f"step '{self.path}' ({self.facet}) failed: {self.error_type}: {self.cause}"
        for path, facet in self.within:
            text += f"\n  in step '{path}' ({facet})"
        return text


def activity_failure(err: ActivityError) -> tuple[str, str]:
    """(message, type name) of the cause of a failed activity."""
    cause = err.cause
    if isinstance(cause, ApplicationError):
        return cause.message, cause.type or "ApplicationError"
    if isinstance(cause, TimeoutError):
        return f"activity timed out ({cause.type.name if cause.type else 'timeout'})", "TimeoutError"
    if cause is not None:
        return str(cause) or type(cause).__name__, type(cause).__name__
    return str(err), "ActivityError"


class Skipped(Exception):
    """A step was not started because a step it needs failed, or its scope failed."""


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


class Handle:
    """A step's slot in its scope: awaited by exactly the steps that reference it."""

    __slots__ = ("name", "declared", "nullable", "done", "returns", "failed")

    def __init__(self, name: str, declared: tuple[str, ...], nullable: tuple[str, ...] = ()):
        self.name = name
        self.declared = declared
        self.nullable = nullable  # fields that read as null when unset (error/error_type of a catchable step)
        self.done: asyncio.Future = asyncio.get_running_loop().create_future()
        self.returns: dict[str, Any] | None = None
        self.failed = False

    @classmethod
    def resolved(cls, name: str, declared: tuple[str, ...], returns: dict[str, Any],
                 nullable: tuple[str, ...] = ()) -> Handle:
        handle = cls(name, declared, nullable)
        handle.resolve(returns)
        return handle

    def resolve(self, returns: dict[str, Any]) -> None:
        self.returns = returns
        if not self.done.done():
            self.done.set_result(None)

    def fail(self) -> None:
        self.failed = True
        if not self.done.done():
            self.done.set_result(None)

    async def wait(self) -> dict[str, Any]:
        await self.done
        if self.failed or self.returns is None:
            raise Skipped(f"step '{self.name}' failed")
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
    ``control`` is the parent whose failure stops this scope's steps from
    starting (the caller's scope for an inlined body).
    """

    __slots__ = ("params", "path", "steps", "names", "control", "failed", "script_target", "owner")

    def __init__(self, params: dict[str, Any], path: str, names: Scope | None, control: Scope | None,
                 script_target: str, steps: dict[str, Handle] | None = None, owner: str | None = None):
        self.owner = owner  # path of the nearest enclosing step (None at the workflow's top level)
        self.params = params
        self.path = path
        self.steps: dict[str, Handle] = steps if steps is not None else {}
        self.names = names
        self.control = control
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
            scope = scope.control

    def is_failed(self) -> bool:
        scope: Scope | None = self
        while scope is not None:
            if scope.failed:
                return True
            scope = scope.control
        return False

    async def wait_for(self, refs: list[str]) -> None:
        """Wait for exactly the steps ``refs`` names; Skipped if one failed or the scope did."""
        for name in refs:
            await self.find(name).wait()
        if self.is_failed():
            raise Skipped(f"'{self.path}' stopped after a failure")


def first_failure(results: list[Any]) -> BaseException | None:
    """The failure to report among gathered results: earliest StepFailure, else any other error."""
    failures = [r for r in results if isinstance(r, StepFailure)]
    if failures:
        return min(failures, key=lambda f: f.seq)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, Skipped):
            return result
    for result in results:
        if isinstance(result, Skipped):
            return result
    return None


async def gather_all(coros: list) -> list[Any]:
    """Run coroutines concurrently, let every one finish, then raise the failure to report."""
    if len(coros) == 1:
        results = [await _capture(coros[0])]
    else:
        results = await asyncio.gather(*coros, return_exceptions=True)
    failure = first_failure(results)
    if failure is not None:
        raise failure
    return results


async def _capture(coro) -> Any:
    try:
        return await coro
    except Exception as err:  # noqa: BLE001 - handed to first_failure like gather would
        return err
