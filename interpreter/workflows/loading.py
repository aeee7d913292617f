"""LoadProgram: the activity that pins a run's program in its history, for a run and for each of its children.

A run started afresh asks for the workflow's latest program (or the hash its
starter put in the memo); a continued run and a child ask for the hash the
run pinned first, so every history of one logical run interprets the same
program. Since Level.LOCAL_LOAD it is a local activity (the workflow's own
worker serves LoadProgram): the run's first workflow task loads the program
and goes on to its first steps, with no second task and server round trip.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import LOAD_PROGRAM_ACTIVITY
    from interpreter.program.model import Program
    from interpreter.program.pinned import unpack_program
    from interpreter.program.serialize import ProgramFormatError

from .boundaries import activity_failure
from .options import load_program_local_options, load_program_options


async def load_pinned(workflow_name: str, program_hash: str | None, *,
                      local: bool) -> tuple[Program, dict[str, Any]]:
    """The program (and LoadProgram's whole answer: hash, sources, config), or the error that fails the run."""
    request = {"workflow": workflow_name, "hash": program_hash}
    summary = f"FFL machinery: pins the program of {workflow_name} in this history"
    try:
        if local:
            loaded = await workflow.execute_local_activity(
                LOAD_PROGRAM_ACTIVITY, request, activity_id="load-program", summary=summary,
                **load_program_local_options())
        else:
            loaded = await workflow.execute_activity(
                LOAD_PROGRAM_ACTIVITY, request, activity_id="load-program", summary=summary,
                **load_program_options(workflow.info().task_queue))
    except ActivityError as err:
        message, error_type = activity_failure(err)
        raise ApplicationError(f"cannot load workflow '{workflow_name}': {message}", type=error_type,
                               non_retryable=True) from None
    try:
        return unpack_program(loaded), loaded
    except ProgramFormatError as err:  # pinned by a newer release than this worker's
        raise ApplicationError(f"cannot run workflow '{workflow_name}': {err}", type="ProgramFormat",
                               non_retryable=True) from None
