"""The shape of an effects layer on Temporal, in the spirit of the SDK's interceptors.

Each layer does its one job for the requests it cares about and passes every
request on to ``next``, the layer below; the bottom one (dispatch.Activities)
talks to Temporal. A run's stack is built once, per feature level
(stack.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: nothing here runs Temporal's or the language's code
    from interpreter.program.model import Block
    from interpreter.semantics import BuiltinCall, Effects, FacetCall, Iterations, ScriptCall, Write


class Layer:
    """Passes every request on; a layer overrides what it handles."""

    def __init__(self, next_layer: Effects):
        self.next = next_layer

    async def call_facet(self, request: FacetCall) -> Any:
        return await self.next.call_facet(request)

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        return await self.next.builtin(request)

    async def script(self, request: ScriptCall) -> Any:
        return await self.next.script(request)

    def runs_elsewhere(self, block: Block, count: int) -> bool:
        return self.next.runs_elsewhere(block, count)

    async def iterations(self, request: Iterations) -> list[list[Write]]:
        return await self.next.iterations(request)
