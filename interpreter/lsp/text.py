"""Positions in FFL text: the compiler gives where a name starts, the text says where it ends.

Lines and columns here are 0-based (the protocol's); the compiler's ``Loc`` is
1-based. Columns count characters, which equals the protocol's UTF-16 units
for the ASCII names FFL allows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..program.model import Loc

_NAME = re.compile(r"\$?\.?[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*\.[ \t]*[A-Za-z_][A-Za-z0-9_]*)*")
_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Span:
    """A range on one line: ``line`` and the columns ``start`` (inclusive) to ``end`` (exclusive)."""

    line: int
    start: int
    end: int

    def contains(self, line: int, col: int) -> bool:
        return line == self.line and self.start <= col <= self.end


class Text:
    """A document's text split into lines once, for position look-ups."""

    def __init__(self, source: str):
        self.source = source.replace("\r\n", "\n")
        self.lines = self.source.split("\n")

    def line(self, index: int) -> str:
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def segments(self, loc: Loc | None) -> list[Span]:
        """The dotted name written at ``loc``, one span per segment (``a.b.C`` gives three)."""
        if loc is None or loc.line < 1:
            return []
        line, col = loc.line - 1, max(loc.col - 1, 0)
        found = _NAME.match(self.line(line), col)
        if found is None:
            return []
        return [Span(line, m.start() + col, m.end() + col) for m in _SEGMENT.finditer(found.group())]

    def name_after(self, loc: Loc | None, keyword: str) -> list[Span]:
        """Segments of the name that follows ``keyword`` written at ``loc`` (``yield T``, ``foreach v``)."""
        if loc is None or loc.line < 1:
            return []
        line, col = loc.line - 1, loc.col - 1
        text = self.line(line)
        at = text.find(keyword, col)
        while 0 <= at < len(text):
            after = at + len(keyword)
            rest = text[after:]
            skipped = len(rest) - len(rest.lstrip())
            if skipped:
                return self.segments(Loc(line=line + 1, col=after + skipped + 1))
            at = text.find(keyword, after)
        return []

    def token_span(self, line: int, col: int) -> Span:
        """The name (or else the single character) at a 0-based position, for a diagnostic's range."""
        text = self.line(line)
        found = _NAME.match(text, col)
        end = found.end() if found else min(col + 1, len(text))
        return Span(line, col, max(end, col))

    def offset(self, line: int, col: int) -> int:
        return sum(len(part) + 1 for part in self.lines[:line]) + col
