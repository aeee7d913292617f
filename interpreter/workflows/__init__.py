"""Layer 3: the deterministic Temporal workflow that interprets compiled FFL programs."""

from .ffl_workflow import FFLWorkflow


def workflow_runner():
    """The sandboxed runner for FFLWorkflow: the pure program layer and pydantic pass through.

    They are deterministic and heavy to re-import for every run; the workflow
    modules themselves stay sandboxed.
    """
    from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("pydantic", "interpreter.program")
    )


__all__ = ["FFLWorkflow", "workflow_runner"]
