"""Argument checks of calls, mixins, implicits and yields against what their target declares."""

from __future__ import annotations

from collections.abc import Iterable

from ..program.facts import accepted_names
from ..program.model import Arg, Call, FacetDecl, ImplicitDecl, Loc, MixinCall, Yield
from .fields import JSON, Ty, facet, facet_fields, schema, ty
from .suggest import did_you_mean
from .symbols import SymbolTable

Problem = tuple[Loc | None, str]


def accepted_params(table: SymbolTable, decl: FacetDecl) -> set[str]:
    """Names a call of ``decl`` may pass: the interpreter's rule for a run's inputs too (program/facts.py)."""
    return set(accepted_names(decl, lambda qname: facet(table, qname)))


def _near(arg: Arg, args: list[Arg], declared: Iterable[str]) -> str:
    """Suggest a declared name for an undeclared argument, leaving out those the call already passes."""
    given = {a.name for a in args}
    return did_you_mean(arg.name, [name for name in declared if name not in given])


def duplicate_args(args: list[Arg]) -> list[Problem]:
    seen: set[str] = set()
    out: list[Problem] = []
    for arg in args:
        if arg.name in seen:
            out.append((arg.loc, f"argument '{arg.name}' is given twice"))
        seen.add(arg.name)
    return out


def mixin_problems(table: SymbolTable, mixin: MixinCall) -> list[Problem]:
    out = duplicate_args(mixin.args)
    decl = facet(table, mixin.facet)
    if decl is None:
        return out
    accepted = accepted_params(table, decl)
    for arg in mixin.args:
        if arg.name not in accepted:
            out.append((arg.loc or mixin.loc, f"unknown argument '{arg.name}': mixin '{decl.qname}' has no parameter "
                                              f"'{arg.name}'{_near(arg, mixin.args, accepted)}"))
    return out


def call_problems(table: SymbolTable, call: Call) -> list[Problem]:
    """Undeclared and repeated arguments of a step's call (with its mixins).

    A parameter that neither the call, a mixin, an implicit nor a default
    gives is not an error: docs/language.md says the argument is then absent.
    """
    out = duplicate_args(call.args)
    if call.kind == "schema":
        record = schema(table, call.facet)
        if record is not None:
            names = {f.name for f in record.fields}
            out += [
                (a.loc or call.loc, f"unknown field '{a.name}' of schema '{record.qname}'{_near(a, call.args, names)}")
                for a in call.args
                if a.name not in names
            ]
        out += [(m.loc or call.loc, f"mixin '{m.name}' on schema instantiation '{call.name}'") for m in call.mixins]
        return out
    decl = facet(table, call.facet)
    if decl is None:
        return out
    accepted = accepted_params(table, decl)
    out += [
        (a.loc or call.loc, f"unknown argument '{a.name}': facet '{decl.qname}' has no parameter '{a.name}'"
                            f"{_near(a, call.args, accepted)}")
        for a in call.args
        if a.name not in accepted
    ]
    for mixin in call.mixins:
        out += mixin_problems(table, mixin)
    return out


def implicit_problems(table: SymbolTable, decl: ImplicitDecl) -> list[Problem]:
    call = decl.call
    out = duplicate_args(call.args)
    if call.kind == "schema":
        record = schema(table, call.facet)
        names = {f.name for f in record.fields} if record is not None else None
        what = "schema"
    else:
        target = facet(table, call.facet)
        names = accepted_params(table, target) if target is not None else None
        what = "facet"
    if names is not None:
        out += [
            (a.loc or call.loc, f"implicit '{decl.name}' passes unknown argument '{a.name}': {what} '{call.facet}' "
                                f"does not declare it{_near(a, call.args, names)}")
            for a in call.args
            if a.name not in names
        ]
    if call.mixins:
        out.append((call.mixins[0].loc or call.loc, f"implicit '{decl.name}' may not have mixins"))
    return out


def yield_problems(table: SymbolTable, item: Yield, types: dict[str, Ty] | None = None) -> list[Problem]:
    """Unknown returns in a yield, and values whose static type cannot fit the return they set."""
    out = duplicate_args(item.args)
    decl = facet(table, item.target)
    if decl is None:
        return out
    fields = facet_fields(table, decl)
    if fields is None:
        return out
    out += [
        (a.loc or item.loc, f"unknown return '{a.name}' in yield: '{decl.qname}' has no return '{a.name}'"
                            f"{_near(a, item.args, fields)}")
        for a in item.args
        if a.name not in fields
    ]
    for arg in item.args:
        found, declared = (types or {}).get(arg.name), fields.get(arg.name)
        if arg.name in fields and not _fits(found, declared):
            out.append((arg.loc or item.loc, f"yield to '{decl.qname}' sets return '{arg.name}' ({_show(declared)}) "
                                             f"to a value of type {_show(found)}"))
    return out


def _fits(found: Ty, declared: Ty) -> bool:
    """Whether a value of static type ``found`` may be passed where ``declared`` is expected (unknown: yes)."""
    if found is None or declared is None or found == JSON or declared == JSON or found == declared:
        return True
    numbers = {"Long", "Int", "Double"}
    if found[1] == declared[1] and found[0] in numbers and declared[0] in numbers:
        return declared[0] == "Double" or found[0] != "Double"  # a whole number fits Double, not the other way
    return False


def builtin_problems(table: SymbolTable, call: Call, types: dict[str, Ty]) -> list[Problem]:
    """A built-in step's call: every parameter without a default given, each of a fitting type where known.

    Built-ins have no handler to forgive a missing or wrong argument, so these
    are errors, as a typo in a timer would otherwise only show once the run waits.
    """
    decl = facet(table, call.facet)
    if decl is None:
        return []
    out: list[Problem] = []
    given = {a.name for a in call.args}
    for param in decl.params:
        if param.default is None and param.name not in given:
            out.append((call.loc, f"'{decl.qname}' needs argument '{param.name}'"))
    declared = {p.name: ty(p.type) for p in decl.params}
    for arg in call.args:
        expected = declared.get(arg.name)
        if arg.name in types and expected is not None and not _fits(types[arg.name], expected):
            found, want = types[arg.name], expected
            out.append((arg.loc or call.loc, f"argument '{arg.name}' of '{decl.qname}' expects "
                                             f"{_show(want)}, got {_show(found)}"))
    return out


def _show(t: Ty) -> str:
    assert t is not None
    return "[" * t[1] + t[0] + "]" * t[1]
