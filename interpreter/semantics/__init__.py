"""Layer 3, the language's semantics: a recursive interpreter over the compiled program and the effects
interface it asks for everything outside the language. Deterministic; imports neither temporalio nor
anything that does I/O (tests/test_layers.py enforces it), so the same interpreter runs in a Temporal
workflow (interpreter/workflows) and in memory (memory.py)."""

from .effects import BuiltinCall, Effects, FacetCall, Iterations, Reporter, ScriptCall
from .failures import InvalidInput, Skipped, StepFailure
from .interpreter import CANCELLED_MESSAGE, CANCELLED_TYPE, Interpreter, Rules
from .scope import Handle, Scope, Write

__all__ = ["CANCELLED_MESSAGE", "CANCELLED_TYPE", "BuiltinCall", "Effects", "FacetCall", "Handle", "Interpreter",
           "InvalidInput", "Iterations", "Reporter", "Rules", "Scope", "ScriptCall", "Skipped", "StepFailure",
           "Write"]
