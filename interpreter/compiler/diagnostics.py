"""Compiler diagnostics: every problem found, each with its place in the source.

A diagnostic is an error (the program is rejected) or a warning (printed, the
program still compiles). Warnings never change the compiled program: they are
reported beside it, so whether they were printed cannot alter its content hash.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from ..program.model import Loc

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Diagnostic:
    file: str
    line: int
    col: int
    message: str
    severity: Severity = "error"

    @classmethod
    def at(cls, loc: Loc | None, message: str, file: str = "", severity: Severity = "error") -> Diagnostic:
        if loc is None:
            return cls(file, 0, 0, message, severity)
        return cls(loc.file or file, loc.line, loc.col, message, severity)

    @property
    def is_warning(self) -> bool:
        return self.severity == "warning"

    def as_error(self) -> Diagnostic:
        """The same diagnostic as an error (``--strict``)."""
        return replace(self, severity="error")

    def __str__(self) -> str:
        label = "warning: " if self.is_warning else ""
        return f"{self.file}:{self.line}:{self.col}: {label}{self.message}"


def errors_of(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if not d.is_warning]


def warnings_of(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.is_warning]


class FFLSyntaxError(Exception):
    """The only exception the parser raises for bad input; holds all diagnostics found."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = sorted(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class CompileError(Exception):
    """Raised by ``compile_*`` helpers when validation finds errors.

    ``diagnostics`` holds the errors; ``warnings`` the warnings found beside them.
    """

    def __init__(self, diagnostics: list[Diagnostic], warnings: list[Diagnostic] | None = None):
        self.diagnostics = sorted(diagnostics)
        self.warnings = sorted(warnings or [])
        super().__init__("\n".join(str(d) for d in self.diagnostics))
