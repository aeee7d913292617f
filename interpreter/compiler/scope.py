"""Lexical scopes of a declaration body: which steps and parameters an expression may read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..program.model import Loc, Step
from .fields import Ty


@dataclass(frozen=True)
class Visible:
    """A step an expression may reference.

    ``sink``/``index`` are set for steps of an earlier sibling block seen by a
    ``when`` block: referencing one records ``index`` in ``sink`` (Block.sees).
    """

    step: Step
    sink: set[int] | None = None
    index: int = -1


@dataclass(frozen=True)
class Layer:
    """The steps of one block, by name with their position; the first ``upto`` are visible.

    Layers are shared between the scopes of one block (only ``upto`` differs),
    so walking a block of n steps costs O(n), not O(n²).
    """

    steps: dict[str, tuple[int, Visible]]
    upto: int

    @classmethod
    def of(cls, steps: list[Step], upto: int, sink: set[int] | None = None, index: int = -1) -> Layer:
        table: dict[str, tuple[int, Visible]] = {}
        for position, step in enumerate(steps):
            table.setdefault(step.name, (position, Visible(step, sink, index)))
        return cls(table, upto)


@dataclass(frozen=True)
class Scope:
    """What an expression may read here.

    ``layers``: step tables of enclosing blocks, innermost last;
    ``current``: the step whose call is being checked (may not read itself);
    ``params``: ``$.`` names with types, None when a pre-script makes them unknowable;
    ``yield_targets``: the declaration, its signature mixins and enclosing steps' facets;
    ``loop_vars``: variables of enclosing foreach blocks (readable by bare name) → their foreach;
    ``enclosing``: ids of the steps whose ``andThen`` this scope is inside (their inner steps are not
    read through them: they complete only after the reader).
    """

    layers: tuple[Layer, ...] = ()
    current: str | None = None
    params: dict[str, Ty] | None = None
    yield_targets: tuple[str, ...] = ()
    loop_vars: dict[str, Loc | None] = field(default_factory=dict)
    enclosing: tuple[str, ...] = ()

    def lookup(self, name: str) -> Visible | None:
        """The visible step called ``name`` (innermost first), if any."""
        for layer in reversed(self.layers):
            found = layer.steps.get(name)
            if found is not None and found[0] < layer.upto:
                return found[1]
        return None

    def find_any(self, name: str) -> Step | None:
        """A step called ``name`` in an enclosing block, visible or not (defined later, or the current one)."""
        for layer in reversed(self.layers):
            found = layer.steps.get(name)
            if found is not None:
                return found[1].step
        return None

    def is_later(self, name: str) -> bool:
        """True when ``name`` is a step of an enclosing block defined after this point."""
        return any(name in layer.steps and layer.steps[name][0] >= layer.upto for layer in self.layers)

    def visible(self) -> list[Step]:
        """The steps an expression may reference here, innermost block first."""
        return [visible.step for layer in reversed(self.layers)
                for position, visible in layer.steps.values() if position < layer.upto]

    def visible_steps(self) -> list[str]:
        """Names of the steps an expression may reference here (gathered only to suggest one)."""
        return [name for layer in self.layers for name, (position, _) in layer.steps.items() if position < layer.upto]

    def with_layer(self, layer: Layer) -> Scope:
        return replace(self, layers=(*self.layers, layer))

    def with_param(self, name: str, t: Ty = None) -> Scope:
        if self.params is None:
            return self
        return replace(self, params={**self.params, name: t})

    def with_loop_var(self, name: str, loc: Loc | None) -> Scope:
        return replace(self, loop_vars={**self.loop_vars, name: loc})

    def evolve(self, **changes) -> Scope:
        return replace(self, **changes)


@dataclass
class Reads:
    """Step and parameter names an expression group reads, in first-use order."""

    refs: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)

    def ref(self, name: str) -> None:
        if name not in self.refs:
            self.refs.append(name)

    def param(self, name: str) -> None:
        if name not in self.params:
            self.params.append(name)
