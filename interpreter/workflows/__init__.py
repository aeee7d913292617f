"""Layer 4: the deterministic Temporal workflow that runs the language's interpreter (interpreter.semantics)."""

import os

from .ffl_workflow import FFLWorkflow

SANDBOX_ENV = "FFL_WORKFLOW_SANDBOX"
"""Set to 1 to run FFLWorkflow in the SDK's sandbox (a determinism check while developing)."""


def workflow_runner(sandboxed: bool | None = None):
    """The runner for FFLWorkflow: unsandboxed unless asked (``sandboxed`` or $FFL_WORKFLOW_SANDBOX=1).

    The workflow layer is deterministic by construction (no I/O, clock,
    randomness or set order; replay tests run it in the sandbox). In
    production the sandbox costs too much at scale: temporalio 1.35 re-enters
    it for every payload it converts (~9 times per activity), so a 5,000-step
    run replays in ~11 s sandboxed against ~4 s without, past the 10 s
    workflow-task timeout a cache eviction's full replay must meet.
    Sandboxed, the pure program and semantics layers and pydantic pass through.
    """
    if sandboxed is None:
        sandboxed = os.environ.get(SANDBOX_ENV, "") not in ("", "0", "false")
    if not sandboxed:
        from temporalio.worker import UnsandboxedWorkflowRunner

        return UnsandboxedWorkflowRunner()
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("pydantic", "interpreter.program", "interpreter.semantics")
    )


__all__ = ["FFLWorkflow", "workflow_runner"]
