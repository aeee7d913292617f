"""LoadProgram: the activity that pins a run's program in its history, for a run and for each of its children.

A run started afresh asks for the workflow's latest program (or the hash its
starter put in the memo); a continued run and a child ask for the hash the
run pinned first, so every history of one logical run interprets the same
program. Since Level.LOCAL_LOAD it is a local activity (the workflow's own
worker serves LoadProgram): the run's first workflow task loads the program
and goes on to its first steps, with no second task and server round trip. Since Level.BRIEF_TASKS a run
asks LoadProgram to say when its load was slow (``settle``): the run then ends that task with an
``ffl.Tick``, parses the program in the next (LoadProgram has begun the parse on a thread of its own) and
starts its steps in a third, so no one task holds a large program's load, its parse and a batch of steps.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import LOAD_PROGRAM_ACTIVITY, TICK_ACTIVITY
    from interpreter.program.model import Program
    from interpreter.program.pinned import unpack_program
    from interpreter.program.serialize import ProgramFormatError

from .boundaries import activity_failure
from .options import load_program_local_options, load_program_options, tick_options


async def load_pinned(workflow_name: str, program_hash: str | None, *, local: bool,
                      settle: bool = False) -> tuple[Program, dict[str, Any]]:
    """The program (and LoadProgram's whole answer: hash, sources, config), or the error that fails the run.

    With ``settle`` (since Level.BRIEF_TASKS), an answer holding ``"settle": true`` (the load was slow; it is
    in history, so every replay decides alike) ends this workflow task before the program is parsed, and the
    caller ends the next one before its first step (``Scale.end_task``).
    """
    request: dict[str, Any] = {"workflow": workflow_name, "hash": program_hash}
    if settle:
        request["settle"] = True
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
    if settle and loaded.get("settle"):
        try:
            await workflow.execute_activity(TICK_ACTIVITY, activity_id="load-program/settle",
                                            **tick_options(workflow.info().task_queue))
        except ActivityError:
            pass  # scheduling it has ended the task, which is all it is for
    try:
        return unpack_program(loaded), loaded
    except ProgramFormatError as err:  # pinned by a newer release than this worker's
        raise ApplicationError(f"cannot run workflow '{workflow_name}': {err}", type="ProgramFormat",
                               non_retryable=True) from None
