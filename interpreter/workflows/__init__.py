"""Layer 3: the deterministic Temporal workflow that interprets compiled FFL programs."""

from .ffl_workflow import FFLWorkflow

__all__ = ["FFLWorkflow"]
