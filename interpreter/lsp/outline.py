"""Document symbols (the outline) and folding ranges.

Folding follows the braces of the text, skipping strings and comments, so it
works while the file does not parse; braces inside a script's Python are
balanced in any program that runs.
"""

from __future__ import annotations

from lsprotocol import types

from .index import FileIndex, Symbol
from .text import Text

_KINDS = {
    "namespace": types.SymbolKind.Namespace,
    "workflow": types.SymbolKind.Class,
    "facet": types.SymbolKind.Interface,
    "event facet": types.SymbolKind.Event,
    "schema": types.SymbolKind.Struct,
    "implicit": types.SymbolKind.Constant,
    "parameter": types.SymbolKind.Property,
    "return": types.SymbolKind.Field,
    "field": types.SymbolKind.Field,
    "step": types.SymbolKind.Variable,
    "foreach variable": types.SymbolKind.Variable,
}


def _range(symbol: Symbol) -> types.Range:
    span = symbol.span
    assert span is not None
    return types.Range(types.Position(span.line, span.start), types.Position(span.line, span.end))


def _enclosing(spans: list[tuple[int, int]], line: int) -> types.Range | None:
    """The smallest folded region opened on ``line`` (a declaration's body), as a range."""
    opened = [(start, end) for start, end in spans if start == line]
    return types.Range(types.Position(line, 0), types.Position(max(e for _, e in opened), 0)) if opened else None


def document_symbols(index: FileIndex, text: Text) -> list[types.DocumentSymbol]:
    regions = [(r.start_line, r.end_line) for r in folding_ranges(text)]

    def convert(symbol: Symbol) -> types.DocumentSymbol:
        selection = _range(symbol)
        body = _enclosing(regions, selection.start.line)
        whole = selection if body is None else types.Range(
            types.Position(selection.start.line, 0), types.Position(body.end.line, len(text.line(body.end.line))))
        return types.DocumentSymbol(
            name=symbol.name.rsplit(".", 1)[-1] if symbol.kind != "namespace" else symbol.name,
            kind=_KINDS.get(symbol.kind, types.SymbolKind.Variable),
            range=whole,
            selection_range=selection,
            detail=symbol.kind,
            children=[convert(c) for c in symbol.children if c.span is not None],
        )

    return [convert(s) for s in index.outline if s.span is not None]


def folding_ranges(text: Text) -> list[types.FoldingRange]:
    source, out, stack = text.source, [], []
    line, i, n = 0, 0, len(source)
    while i < n:
        char = source[i]
        if char == "\n":
            line += 1
        elif char == '"':
            i += 1
            while i < n and source[i] not in '"\n':
                i += 2 if source[i] == "\\" else 1
            if i < n and source[i] == "\n":
                continue  # an unterminated string ends at its line
        elif source.startswith("//", i):
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            lines = source.count("\n", i, end)
            if lines:
                out.append(types.FoldingRange(line, line + lines, kind=types.FoldingRangeKind.Comment))
            line += lines
            i = end
            continue
        elif char == "{":
            stack.append(line)
        elif char == "}" and stack:
            start = stack.pop()
            if line > start:
                out.append(types.FoldingRange(start, line))
        i += 1
    return sorted(out, key=lambda r: (r.start_line, r.end_line))
