"""What the language asks of the world: the effects interface and its typed requests.

The interpreter (interpreter.py) decides *what* happens in a run; an
``Effects`` decides *how*: on Temporal, each request passes through small
stacked layers (the memo of a continued run, the continue-as-new hold,
admission, local or remote activities: interpreter/workflows); in tests and
``ffl test``, an in-memory implementation answers at once (memory.py). A
``Reporter`` hears every state a step or block reaches (the steps query and
the mirror on Temporal, a coverage record in tests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from interpreter.program.model import Block, FacetDecl, Script, Step

from .scope import Scope, Write


@dataclass(frozen=True)
class FacetCall:
    """The step at ``path`` calls event (or prompt) facet ``decl`` with ``args``: its handler answers."""

    path: str
    decl: FacetDecl
    step: Step
    args: dict[str, Any]


@dataclass(frozen=True)
class BuiltinCall:
    """The step at ``path`` performs built-in ``facet`` (``ffl.Sleep``, ``ffl.WaitForSignal``, …)."""

    path: str
    facet: str
    args: dict[str, Any]


@dataclass(frozen=True)
class ScriptCall:
    """A ``script`` at ``path`` runs with ``params`` as its ``$``; its result belongs to facet ``owner``."""

    path: str
    script: Script
    params: dict[str, Any]
    owner: str


@dataclass(frozen=True)
class Iterations:
    """All iterations of a foreach ``block`` over ``items``, to be run elsewhere (child workflows)."""

    block: Block
    scope: Scope
    items: list[Any]


class Effects(Protocol):
    async def call_facet(self, request: FacetCall) -> Any:
        """The handler's result (a record, or None for no returns); a StepFailure when it failed."""

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        """The built-in step's returns; a StepFailure when it failed."""

    async def script(self, request: ScriptCall) -> Any:
        """The script's result record; a StepFailure when it failed."""

    def runs_elsewhere(self, block: Block, count: int) -> bool:
        """Whether ``count`` iterations of the foreach ``block`` run elsewhere (``iterations``) instead of here."""

    async def iterations(self, request: Iterations) -> list[list[Write]]:
        """The iterations' yields in index order; a StepFailure of the first that failed."""


class Reporter(Protocol):
    def step(self, path: str, facet: str, state: str, *, statement_id: str = "", object_type: str = "",
             params: dict | None = None, returns: dict | None = None, error: str | None = None,
             parent: str | None = None, block: str = "") -> None:
        """A step reached ``state`` (running, completed, caught, failed, cancelled)."""

    def block(self, path: str, object_type: str, state: str, *, parent: str | None, error: str | None = None,
              returns: dict | None = None, foreach: tuple[str, Any] | None = None, facet: str = "") -> None:
        """A block (AndThen, AndMap, AndMatch), a foreach iteration or a yield reached ``state``."""

    def log(self, path: str, message: str) -> None:
        """Something the run's log should say about the step at ``path``."""

    def warn(self, path: str, message: str) -> None:
        """A warning about the step at ``path`` (a value passed on although it does not fit its type)."""
