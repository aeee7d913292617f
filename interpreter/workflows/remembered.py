"""The memo as an effects layer: a continued run's calls answered from what its predecessors completed.

A hit resolves at once and schedules nothing (the entry's result, or its
failure raised again); a miss passes the request on and remembers its result
(or failure) under the call's path, with the digest of what it was called
with, for the runs that continue this one. The memo, the hold and what is in
flight are the run's ``Scale`` (continuation.py); nothing here touches
Temporal.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from interpreter.semantics import StepFailure

from .layer import Layer
from .memo import call_digest, failure_entry, result_entry

if TYPE_CHECKING:
    from interpreter.semantics import BuiltinCall, Effects, FacetCall, ScriptCall

    from .continuation import Scale


def recalled(entry: dict[str, Any], path: str, facet: str) -> Any:
    """A memo entry's result, or its failure raised again as it was first raised."""
    if "e" in entry:
        message, error_type = entry["e"]
        raise StepFailure(path, facet, message, error_type)
    return entry.get("r")


class Remembered(Layer):
    """The memo as an effects layer: answers what an earlier run of this logical run completed, remembers the
    rest; a built-in step waits while the run holds, and is counted in flight so the run never continues
    as new during one."""

    def __init__(self, scale: Scale, next_layer: Effects):
        super().__init__(next_layer)
        self.scale = scale

    async def call_facet(self, request: FacetCall) -> Any:
        digest = call_digest(request.decl.qname, request.args)
        hit = self.scale.memo.get(request.path)
        if hit is not None and self.scale.honours(request.path, hit, digest, request.step.refs):
            await self.scale.restored()
            return recalled(hit, request.path, request.decl.qname)
        return await self._kept(request.path, self.next.call_facet(request), digest)

    async def script(self, request: ScriptCall) -> Any:
        hit = self.scale.memo.get(request.path)
        if hit is not None:
            return recalled(hit, request.path, request.owner or "script")
        return await self._kept(request.path, self.next.script(request))

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        digest = call_digest(request.facet, request.args)
        hit = self.scale.memo.get(request.path)
        if hit is not None and self.scale.honours(request.path, hit, digest, []):
            await self.scale.restored()
            return recalled(hit, request.path, request.facet) or {}
        await self.scale.gate()
        with self.scale.builtin_in_flight():
            return await self._kept(request.path, self.next.builtin(request), digest)

    async def _kept(self, path: str, work: Coroutine[Any, Any, Any], digest: str = "") -> Any:
        """``work``'s result, or its failure, remembered under ``path`` (with what it was called with) for the
        runs that continue this one."""
        self.scale.running.add(path)
        try:
            result = await work
        except StepFailure as failure:
            self.scale.memo.put(path, failure_entry(failure.cause, failure.error_type, digest))
            raise
        finally:
            self.scale.running.discard(path)
        self.scale.memo.put(path, result_entry(result, digest))
        return result
