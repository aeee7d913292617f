"""Policy mixins → activity options: ``with ffl.Retry(...)``, ``ffl.Timeout(...)``, ``ffl.Queue(...)``.

Runs after name resolution and before the other checks. Each policy mixin on
an event facet's declaration, or on one call of an event facet, is checked
(known arguments, constant values of the right type and range), folded into
the declaration's or call's ``Policy`` and taken out of its mixins, so it is
never passed to a handler nor read as a record. Policies are constants
because the options they set are built once, when a run loads its program.

Also reported here: built-in steps used as mixins, policies called as steps,
mixins on a built-in step and implicits of built-ins.
"""

from __future__ import annotations

from typing import Any

from ..program.builtins import POLICIES, POLICY_FIELDS, is_builtin
from ..program.evaluate import EvaluationError, evaluate
from ..program.model import Call, FacetDecl, ImplicitDecl, Loc, MixinCall, Policy
from ..program.walk import steps_of
from .calls import mixin_problems
from .diagnostics import Diagnostic
from .symbols import Entry, SymbolTable

_SECONDS = {"initial_seconds", "max_seconds", "start_to_close_seconds", "schedule_to_close_seconds"}


def _constant_steps(name: str) -> Any:
    raise EvaluationError(f"reads step '{name}'")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_problem(arg: str, value: Any) -> str | None:
    """Why ``value`` cannot be policy argument ``arg``, or None. Null means "not given"."""
    if value is None:
        return None
    if arg == "max_attempts":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return "must be a whole number of attempts, 0 or more (0: no limit)"
    elif arg in _SECONDS:
        if not _number(value) or value <= 0:
            return "must be a number of seconds greater than 0"
    elif arg == "heartbeat_seconds":
        if not _number(value) or value < 0:
            return "must be a number of seconds, 0 or more (0: no heartbeat timeout)"
    elif arg == "backoff":
        if not _number(value) or value < 1:
            return "must be a number, 1.0 or more (each wait is the previous one times it)"
    elif arg == "non_retryable":
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            return 'must be a list of error type names, e.g. ["ValueError"]'
    elif arg == "name" and (not isinstance(value, str) or not value.strip()):
        return "must be a non-empty queue name"
    return None


class PolicyExtractor:
    def __init__(self, table: SymbolTable):
        self.table = table
        self.out: list[Diagnostic] = []
        self.file = ""

    def report(self, loc: Loc | None, message: str) -> None:
        self.out.append(Diagnostic.at(loc, message, self.file))

    def run(self) -> list[Diagnostic]:
        for entry in self.table.user_entries():
            self.file = entry.ctx.file
            if isinstance(entry.decl, FacetDecl):
                self.declaration(entry)
            elif isinstance(entry.decl, ImplicitDecl) and is_builtin(entry.decl.call.facet):
                self.report(entry.decl.loc, f"implicit '{entry.decl.name}' of built-in '{entry.decl.call.facet}': "
                                            "built-in facets take no implicits")
        return self.out

    def declaration(self, entry: Entry) -> None:
        decl: FacetDecl = entry.decl  # type: ignore[assignment]
        dispatched = decl.kind == "event" or decl.prompt is not None
        where = f"'{decl.qname}' is a {'workflow' if decl.kind == 'workflow' else 'facet'} without a handler"
        decl.mixins, decl.policy = self.split(decl.mixins, None if dispatched else where)
        for step in steps_of(decl):
            self.call(step.call)

    def call(self, call: Call) -> None:
        if call.kind == "builtin":
            if call.facet in POLICIES:
                self.report(call.loc, f"'{call.facet}' is a policy, not a step: write 'with {call.facet}(...)' on an "
                                      "event facet's declaration or on a call of one")
            elif call.mixins:
                self.report(call.mixins[0].loc or call.loc, f"built-in step '{call.facet}' takes no mixins")
                call.mixins = []
            return
        target = self.table.by_qname.get(call.facet or "")
        decl = target.decl if target is not None else None
        dispatched = isinstance(decl, FacetDecl) and (decl.kind == "event" or decl.prompt is not None)
        where = None if dispatched or decl is None else f"'{call.facet}' is not an event facet"
        call.mixins, call.policy = self.split(call.mixins, where)

    def split(self, mixins: list[MixinCall], refused: str | None) -> tuple[list[MixinCall], Policy | None]:
        """The mixins that stay, and the policy the others make (None when there is none).

        ``refused`` says why policies cannot apply here (reported per policy mixin).
        """
        kept: list[MixinCall] = []
        fields: dict[str, Any] = {}
        seen: set[str] = set()
        for mixin in mixins:
            if not is_builtin(mixin.facet):
                kept.append(mixin)
                continue
            if mixin.facet not in POLICIES:
                self.report(mixin.loc, f"'{mixin.facet}' is a built-in step, not a mixin: call it as a step "
                                       f"(w = {mixin.facet}(...))")
                continue
            if refused is not None:
                self.report(mixin.loc, f"'with {mixin.facet}' sets a handler's activity options, so it applies to "
                                       f"event facets and their calls only: {refused}")
                continue
            if mixin.facet in seen:
                self.report(mixin.loc, f"'with {mixin.facet}' is given twice")
                continue
            seen.add(mixin.facet)
            fields.update(self.policy_fields(mixin))
        return kept, Policy(**fields) if fields else None

    def policy_fields(self, mixin: MixinCall) -> dict[str, Any]:
        """The Policy fields one policy mixin sets; problems reported."""
        name = mixin.facet or mixin.name
        if mixin.alias:
            self.report(mixin.loc, f"'with {name}' takes no 'as {mixin.alias}': a policy is not passed to the handler")
        for loc, message in mixin_problems(self.table, mixin):
            self.report(loc or mixin.loc, message)
        fields: dict[str, Any] = {}
        targets = POLICY_FIELDS[name]
        for arg in mixin.args:
            if arg.name not in targets:
                continue  # reported by mixin_problems
            try:
                value = evaluate(arg.value, {}, _constant_steps)
            except EvaluationError:
                self.report(arg.loc or mixin.loc, f"argument '{arg.name}' of {name} must be a constant (a literal or "
                                                  "a list of literals): options are set once, when a run starts")
                continue
            problem = value_problem(arg.name, value)
            if problem is not None:
                self.report(arg.loc or mixin.loc, f"argument '{arg.name}' of {name} {problem}, got {value!r}")
            elif value is not None:
                fields[targets[arg.name]] = float(value) if arg.name.endswith(("seconds", "backoff")) else value
        if name == "ffl.Queue" and not any(arg.name == "name" for arg in mixin.args):
            self.report(mixin.loc, "ffl.Queue needs argument 'name'")
        return fields


def extract_policies(table: SymbolTable) -> list[Diagnostic]:
    """Fold every policy mixin into its declaration's or call's ``Policy``; return the problems found."""
    return PolicyExtractor(table).run()
