"""A history's effects, built once per feature level: which layers a run has is decided here alone.

- before durable control (``Level.FIRST``, ``RUN_METADATA``): activities only, no built-in steps;
- ``CONTROL``: activities and built-in steps (timers, signals);
- ``SCALE``: the memo of continued runs over them, local activities, child workflows for large
  foreach blocks, and the continue-as-new hold that admission and the memo obey.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .admission import workflow_admission
from .builtins import Builtins
from .children import Children
from .continuation import Scale
from .dispatch import Activities
from .features import Level
from .pacing import Admission
from .remembered import Remembered
from .session import Session
from .signals import Signals
from .tracker import Tracker

if TYPE_CHECKING:
    from interpreter.semantics import Effects


def build_effects(session: Session, tracker: Tracker, signals: Signals, scale: Scale | None,
                  seq_base: int = 0) -> tuple[Effects, Admission]:
    """The effects of one history and its admission (the run waits on it before continuing as new)."""
    admission = workflow_admission(session.config, session.options.tick, scale.holds if scale is not None else None)
    builtins = Builtins(signals, tracker) if session.level >= Level.CONTROL else None
    if scale is None:
        return Activities(session, tracker, admission, builtins), admission
    children = Children(session, tracker, scale, seq_base)
    return Remembered(scale, Activities(session, tracker, admission, builtins, scale, children)), admission
