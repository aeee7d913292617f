"""The compiler's diagnostics as the protocol's: the same message, a range over the name it is about."""

from __future__ import annotations

from lsprotocol import types

from ..compiler import Diagnostic
from .text import Text


def to_lsp(diagnostic: Diagnostic, text: Text) -> types.Diagnostic:
    line, col = max(diagnostic.line - 1, 0), max(diagnostic.col - 1, 0)
    span = text.token_span(line, col)
    return types.Diagnostic(
        range=types.Range(types.Position(line, span.start), types.Position(line, span.end)),
        message=diagnostic.message,
        severity=types.DiagnosticSeverity.Warning if diagnostic.is_warning else types.DiagnosticSeverity.Error,
        source="ffl",
    )
