"""Composed facets that call each other unconditionally: a run of them could never end.

Calling a facet with a body runs that body, so ``facet F() andThen { s = F() }``
recurses without end (at run time: an ever-growing graph in one workflow
task). Recursion is fine when something on the way can stop it — a ``when``
case, a ``foreach`` over a list that may be empty, a ``catch`` — so only
cycles of calls made *unconditionally* are errors:

- a step's call counts when the called facet has a body and the step has no
  tail of its own (a step's own tail replaces the facet's body);
- calls in a step's own ``andThen { ... }`` tail count too;
- calls under ``when``, ``foreach`` or ``catch`` never count.

The run-time bound on nesting (``RuntimeConfig.max_nesting_depth``) covers
the conditional recursion this cannot judge.
"""

from __future__ import annotations

from ..program.model import Block, FacetDecl, Loc, Program, Step
from .diagnostics import Diagnostic

Edge = tuple[str, Step]


def _has_body(decl: FacetDecl | None) -> bool:
    return decl is not None and bool(decl.blocks)


def _unconditional_calls(program: Program, blocks: list[Block]) -> list[Edge]:
    """(called facet, calling step) for every call in ``blocks`` that always runs the called body."""
    calls: list[Edge] = []
    pending = [b for b in blocks if b.kind == "steps"]
    while pending:
        block = pending.pop(0)
        for step in block.steps:
            if step.blocks:
                pending.extend(b for b in step.blocks if b.kind == "steps")
            elif step.call.facet and _has_body(program.facets.get(step.call.facet)):
                calls.append((step.call.facet, step))
    return calls


def _cycle_from(start: str, graph: dict[str, list[Edge]], members: set[str]) -> list[Edge]:
    """A shortest cycle from ``start`` back to it inside one component, as (called facet, calling step) edges."""
    previous: dict[str, Edge] = {}  # facet → (facet calling it, the step that calls)
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for target, step in graph[node]:
                if target == start:
                    edges = [(start, step)]
                    while node != start:
                        before, via = previous[node]
                        edges.append((node, via))
                        node = before
                    return list(reversed(edges))
                if target in members and target not in previous:
                    previous[target] = (node, step)
                    following.append(target)
        frontier = following
    return []


def _components(graph: dict[str, list[Edge]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, position = work.pop()
            if position == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = graph[node]
            if position < len(targets):
                work.append((node, position + 1))
                target = targets[position][0]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def recursion_problems(program: Program) -> list[Diagnostic]:
    """One diagnostic per cycle of unconditional composed-facet calls, at its first call."""
    graph = {name: _unconditional_calls(program, decl.blocks) for name, decl in sorted(program.facets.items())}
    problems = []
    for component in _components(graph):
        members = set(component)
        start = component[0]
        cycle = _cycle_from(start, graph, members)
        if not cycle:
            continue  # a single facet that does not call itself
        names = [start] + [target for target, _ in cycle]
        step = cycle[0][1]
        if len(cycle) == 1:
            message = f"facet '{start}' calls itself unconditionally (step '{step.name}')"
        else:
            message = f"facets call each other unconditionally: {' -> '.join(names)}"
        message += "; the run could never end (make the call depend on a `when` case or a foreach)"
        loc: Loc | None = step.call.loc or step.loc or program.facets[start].loc
        problems.append(Diagnostic.at(loc, message))
    return problems
