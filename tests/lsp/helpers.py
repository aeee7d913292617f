"""Small steps of a test conversation: open or edit a file and wait for its diagnostics, find a position."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient


def position(path: Path, needle: str, offset: int = 0, text: str | None = None) -> types.Position:
    """The position of the first ``needle`` in the file (plus ``offset`` characters)."""
    source = text if text is not None else path.read_text()
    at = source.index(needle) + offset
    line = source.count("\n", 0, at)
    return types.Position(line, at - (source.rfind("\n", 0, at) + 1))


def span(line: int, start: int, end: int) -> types.Range:
    return types.Range(types.Position(line, start), types.Position(line, end))


async def open_file(client: LanguageClient, path: Path) -> list[types.Diagnostic]:
    client.diagnostics.pop(path.as_uri(), None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=path.as_uri(), language_id="ffl", version=1,
                                             text=path.read_text())))
    return await _diagnostics_of(client, path)


async def _diagnostics_of(client: LanguageClient, path: Path) -> list[types.Diagnostic]:
    """The diagnostics published for ``path`` once they arrive (the caller popped the previous ones).

    The server publishes the file that caused a check last, so every other file of that check has arrived too.
    """
    while path.as_uri() not in client.diagnostics:
        await asyncio.sleep(0.01)
    return list(client.diagnostics[path.as_uri()])


async def edit(client: LanguageClient, path: Path, text: str, version: int = 2,
               wait_for: Path | None = None) -> list[types.Diagnostic]:
    """Replace the whole text; return the diagnostics then published for ``wait_for`` (default: ``path``)."""
    client.diagnostics.pop((wait_for or path).as_uri(), None)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    return await _diagnostics_of(client, wait_for or path)


def doc(path: Path) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=path.as_uri())
