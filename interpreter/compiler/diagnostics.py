"""Compiler diagnostics: every problem found, each with its place in the source."""

from __future__ import annotations

from dataclasses import dataclass

from ..program.model import Loc


@dataclass(frozen=True, order=True)
class Diagnostic:
    file: str
    line: int
    col: int
    message: str

    @classmethod
    def at(cls, loc: Loc | None, message: str, file: str = "") -> Diagnostic:
        if loc is None:
            return cls(file, 0, 0, message)
        return cls(loc.file or file, loc.line, loc.col, message)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.message}"


class FFLSyntaxError(Exception):
    """The only exception the parser raises for bad input; holds all diagnostics found."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = sorted(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))


class CompileError(Exception):
    """Raised by ``compile_*`` helpers when validation finds errors."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = sorted(diagnostics)
        super().__init__("\n".join(str(d) for d in self.diagnostics))
