"""Scripts in memory, run as RunScript runs them: in a process of their own, named by their FFL source place."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from temporalio.exceptions import ApplicationError

from interpreter.activities.scripts import run_script_process
from interpreter.program.config import ScriptConfig
from interpreter.program.model import Program
from interpreter.program.scripts import script_origins, scripts_of
from interpreter.semantics import ScriptCall, StepFailure


def script_runner(program: Program) -> Callable[[ScriptCall], Awaitable[dict[str, Any]]]:
    """The scripts of ``program``, each failing its step as RunScript's failure would."""
    scripts, origins = scripts_of(program), script_origins(program)

    async def run(call: ScriptCall) -> dict[str, Any]:
        where = f"script of step '{call.path}'"
        try:
            return await run_script_process(scripts[call.script.id], call.params, where, ScriptConfig(),
                                            origins.get(call.script.id, ""))
        except ApplicationError as err:
            raise StepFailure(call.path, call.owner or "script", err.message, err.type or "ApplicationError") from err

    return run
