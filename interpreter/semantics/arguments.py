"""Arguments of a call: explicit, then call-site mixins, then implicits, then defaults.

Pure functions over the Program (no Temporal): the same rules build a step's
payload, a mixin's record and a workflow's parameters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from interpreter.program.evaluate import EvaluationError, StepValue, evaluate
from interpreter.program.model import Call, FacetDecl, MixinCall, Program, SchemaDecl

StepLookup = Callable[[str], StepValue]


def _no_steps(name: str) -> StepValue:
    raise EvaluationError(f"step '{name}' cannot be read here")


class Arguments:
    """Builds argument records for calls of one program."""

    def __init__(self, program: Program):
        self.program = program

    def target(self, qname: str | None) -> FacetDecl | SchemaDecl | None:
        if qname is None:
            return None
        return self.program.facets.get(qname) or self.program.schemas.get(qname)

    def for_call(self, call: Call, params: dict[str, Any], steps: StepLookup) -> dict[str, Any]:
        """The payload of ``call`` evaluated in the caller's scope."""
        args = {arg.name: evaluate(arg.value, params, steps) for arg in call.args}
        for mixin in call.mixins:
            self._mix(args, mixin, params, steps)
        return self.complete(call.facet, args)

    def complete(self, qname: str | None, args: dict[str, Any]) -> dict[str, Any]:
        """Fill what the caller left out: implicits, parameter defaults, signature mixins."""
        for implicit in self.program.implicits.get(qname or "", []):
            for arg in implicit.call.args:
                if arg.name not in args:
                    args[arg.name] = evaluate(arg.value, {}, _no_steps)
        target = self.target(qname)
        if isinstance(target, SchemaDecl):
            fields = target.fields
        elif isinstance(target, FacetDecl):
            fields = target.params
        else:
            fields = []
        for param in fields:
            if param.name not in args and param.default is not None:
                args[param.name] = evaluate(param.default, args, _no_steps)
        if isinstance(target, FacetDecl):
            for mixin in target.mixins:
                self._mix(args, mixin, args, _no_steps)
        return args

    def _mix(self, args: dict[str, Any], mixin: MixinCall, params: dict[str, Any], steps: StepLookup) -> None:
        """``with M(..)`` merges M's record without overriding; ``as m`` nests it under ``m``."""
        values = {arg.name: evaluate(arg.value, params, steps) for arg in mixin.args}
        values = self.complete(mixin.facet, values)
        if mixin.alias:
            args.setdefault(mixin.alias, values)
            return
        for key, value in values.items():
            args.setdefault(key, value)
