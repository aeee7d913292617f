"""Semantic tokens: each name coloured by what it names (a step, a facet, a parameter...), not by how it looks.

The TextMate grammar of the editors can only guess from the text; the index
knows, so an argument name is a parameter and ``step.field`` a property.
"""

from __future__ import annotations

from lsprotocol import types

from .index import FileIndex
from .symbols import Symbols

TOKEN_TYPES = ["namespace", "function", "struct", "parameter", "property", "variable"]
TOKEN_MODIFIERS = ["declaration", "defaultLibrary"]
LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)

_BY_KIND = {"ns": "namespace", "param": "parameter", "return": "property", "field": "property",
            "step": "variable", "var": "variable"}


def semantic_tokens(index: FileIndex, symbols: Symbols) -> list[int]:
    """The protocol's relative encoding: per token, line delta, start delta, length, type, modifiers."""
    data: list[int] = []
    line = start = 0
    for occurrence in index.occurrences:
        key = symbols.resolve(occurrence.target)
        if key is None:
            continue
        kind = _BY_KIND.get(key[0])
        if kind is None:  # a declaration: a schema or a facet (an implicit reads as a facet)
            found = symbols.symbol(key)
            kind = "struct" if found is not None and found.kind == "schema" else "function"
        modifiers = 1 if occurrence.definition else 0
        if key[0] in ("decl", "ns") and str(key[1]).split(".", 1)[0] == "ffl":
            modifiers |= 2
        span = occurrence.span
        data += [span.line - line, span.start - (start if span.line == line else 0), span.end - span.start,
                 TOKEN_TYPES.index(kind), modifiers]
        line, start = span.line, span.start
    return data
