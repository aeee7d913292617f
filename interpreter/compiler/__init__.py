"""Layer 1: FFL text → syntax tree → validated, resolved Program (pure: no Temporal, no MongoDB).

Public facade: ``check_sources``/``check_files`` return every diagnostic;
``compile_sources``/``compile_files`` return a Program or raise CompileError.
"""

from .compile import check_files, check_sources, compile_files, compile_sources
from .diagnostics import CompileError, Diagnostic, FFLSyntaxError
from .parser import parse_source

__all__ = [
    "CompileError",
    "Diagnostic",
    "FFLSyntaxError",
    "check_files",
    "check_sources",
    "compile_files",
    "compile_sources",
    "parse_source",
]
