"""Go to definition, find references and rename: one look-up of the name under the cursor, then its key."""

from __future__ import annotations

import re

from .index import FileIndex, Key
from .symbols import Symbols, is_real
from .text import Span

Location = tuple[str, Span]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def key_at(index: FileIndex, symbols: Symbols, line: int, col: int) -> Key | None:
    occurrence = index.at(line, col)
    return symbols.resolve(occurrence.target) if occurrence is not None else None


def definitions(symbols: Symbols, key: Key) -> list[Location]:
    """Where ``key`` is declared (every block of a namespace); nothing for a built-in."""
    return [(s.path, s.span) for s in symbols.all(key) if is_real(s.path) and s.span is not None]


def references(symbols: Symbols, key: Key, include_declaration: bool = True) -> list[Location]:
    return [(path, o.span) for path, o in symbols.occurrences(key) if include_declaration or not o.definition]


class RenameError(Exception):
    """A rename the server refuses, with the reason shown to the user."""


RENAMEABLE = ("decl", "param", "return", "field", "step", "var")


def rename(symbols: Symbols, key: Key, new_name: str) -> dict[str, list[tuple[Span, str]]]:
    """Edits per file that rename ``key`` everywhere: its declaration and every use."""
    if key[0] not in RENAMEABLE:
        raise RenameError("only a facet, schema, implicit, parameter, return, field, step or foreach variable "
                          "can be renamed")
    if not _IDENT.match(new_name):
        raise RenameError(f"'{new_name}' is not an FFL name")
    if not definitions(symbols, key):
        raise RenameError("a built-in of namespace ffl cannot be renamed")
    edits: dict[str, list[tuple[Span, str]]] = {}
    for path, span in references(symbols, key):
        edits.setdefault(path, []).append((span, new_name))
    return edits
