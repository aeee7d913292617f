"""Lexical scopes of a declaration body: which steps and parameters an expression may read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..program.model import Step
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
class Scope:
    """What an expression may read here.

    ``later``: step names defined after this point (for a precise message);
    ``current``: the step whose call is being checked (may not read itself);
    ``params``: ``$.`` names with types, None when a pre-script makes them unknowable;
    ``yield_targets``: the declaration, its signature mixins and enclosing steps' facets.
    """

    visible: dict[str, Visible] = field(default_factory=dict)
    later: frozenset[str] = frozenset()
    current: str | None = None
    params: dict[str, Ty] | None = None
    decl_qname: str = ""
    yield_targets: tuple[str, ...] = ()

    def with_steps(self, steps: list[Step]) -> Scope:
        visible = dict(self.visible)
        visible.update((s.name, Visible(s)) for s in steps)
        return replace(self, visible=visible)

    def with_param(self, name: str, t: Ty = None) -> Scope:
        if self.params is None:
            return self
        return replace(self, params={**self.params, name: t})

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
