"""How a run's end is phrased, and whether ``ffl migrate`` may move it: decided on values, without Temporal's API.

The workflow (ffl_workflow.py) raises what these return or raise; an
ApplicationError marked non-retryable fails the run at once instead of
retrying its workflow task forever.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from temporalio.exceptions import ApplicationError, TemporalError

from interpreter.semantics import InvalidInput, Skipped, StepFailure

if TYPE_CHECKING:
    from .continuation import Scale


def failure_of(name: str, err: Exception) -> Exception:
    """The error that fails the run: its message names the failing step, facet and cause.

    Temporal's own errors (non-determinism, sandbox) are re-raised as they
    are so the workflow task fails and can be retried with fixed code; any
    other unexpected error fails the run instead of retrying it forever.
    """
    if isinstance(err, StepFailure):
        return ApplicationError(str(err), type=err.error_type, non_retryable=True)
    if isinstance(err, Skipped):
        return ApplicationError(f"workflow '{name}' stopped: {err}", type="Skipped", non_retryable=True)
    if isinstance(err, InvalidInput):
        return ApplicationError(str(err), type="InvalidParameters", non_retryable=True)
    if isinstance(err, TemporalError):
        return err
    return ApplicationError(f"interpreter error in workflow '{name}': {type(err).__name__}: {err}",
                            type="InterpreterError", non_retryable=True)



def check_migrate_request(program_hash: Any, running: str | None, scale: Scale | None) -> None:
    """Refuse an ``ffl migrate`` this run cannot take: ``running`` is the program hash of a loaded run (None
    while it loads, and for a child), ``scale`` None for a run of a release before continue-as-new."""
    if running is None:
        raise ApplicationError("only a loaded run (not a child) can be moved", type="NotMovable")
    if scale is None:
        raise ApplicationError("this run was started by a release before continue-as-new: it cannot be moved",
                               type="NotMovable")
    if not isinstance(program_hash, str) or not program_hash:
        raise ApplicationError("ffl.migrate takes a program hash", type="NotMovable")
    if program_hash == running:
        raise ApplicationError(f"the run already runs program {program_hash}", type="NotMovable")
    if scale.moving_to:
        raise ApplicationError(f"the run already moves to program {scale.moving_to}", type="NotMovable")
