"""What the interpreter reads of a facet or a step, decided once, when the program is compiled.

The workflow never derives these again: the names a call (or a run's input)
may pass, the parameters a run must be given, the returns a step of a facet
declares, and whether a step can catch. The compiler fills them
(``fill_facts``); ``accepted_names`` is also the rule it checks call
arguments with, so compile time and run time agree. A program compiled
before these fields existed has them unset (None) and gets them when it is
read (``with_facts``), so a run pinned by an older release replays.
"""

from __future__ import annotations

from collections.abc import Callable

from .model import FacetDecl, Program
from .walk import steps_of

FacetLookup = Callable[[str | None], FacetDecl | None]


def accepted_names(decl: FacetDecl, facet: FacetLookup) -> list[str]:
    """Parameters, then per signature mixin its alias (``as m``) or, merged, its parameters.

    An aliased mixin's record travels under its alias (a caller may pass the
    whole record); a merged one's parameters are parameters of the facet.
    """
    names = [p.name for p in decl.params]
    for mixin in decl.mixins:
        if mixin.alias:
            names.append(mixin.alias)
            continue
        mixed = facet(mixin.facet)
        if mixed is not None:
            names.extend(p.name for p in mixed.params)
    return list(dict.fromkeys(names))


def fill_facts(program: Program) -> None:
    """Fill ``accepts``, ``required`` and ``return_names`` of every facet and ``catches`` of every step."""
    facets = program.facets
    for decl in facets.values():
        decl.accepts = accepted_names(decl, lambda qname: facets.get(qname or ""))
        implicit = {arg.name for imp in program.implicits.get(decl.qname, []) for arg in imp.call.args}
        decl.required = [p.name for p in decl.params if p.default is None and p.name not in implicit]
        names = [r.name for r in decl.returns]
        for mixin in decl.mixins:
            mixed = facets.get(mixin.facet or "")
            if mixed is not None:
                names.extend(r.name for r in mixed.returns)
        decl.return_names = list(dict.fromkeys(names))
    for decl in facets.values():
        for step in steps_of(decl):
            target = facets.get(step.call.facet or "")
            step.catches = step.catch is not None or (target is not None and target.catch is not None)


def with_facts(program: Program) -> Program:
    """``program`` with its facts filled (a program compiled before they existed has none)."""
    if any(decl.accepts is None for decl in program.facets.values()):
        fill_facts(program)
    return program

