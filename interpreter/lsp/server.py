"""The language server: pygls handlers, each a thin call into one feature module.

Checks run on the server's thread as each change arrives (an edit re-checks
only what it can affect, see program.py), the newest text only when an editor
sends changes faster than they are checked; the collector stays paused while a
check builds trees, and what survives is frozen out of later collections, so
a large workspace does not make every collection walk all of it (the trees
hold no reference cycles, as program/gcpause.py relies on too, so
freezing hides no garbage: replaced trees are freed by reference counting).
"""

from __future__ import annotations

import asyncio
import gc

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from ..compiler import Diagnostic
from ..program.gcpause import collector_paused
from .completion import complete
from .diagnostics import to_lsp
from .hover import render
from .navigation import RENAMEABLE, RenameError, definitions, key_at, references, rename
from .outline import document_symbols, folding_ranges
from .semantic import LEGEND, semantic_tokens
from .text import Span, Text
from .workspace import Workspace

NAME = "ffl-lsp"


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def _range(span: Span) -> types.Range:
    return types.Range(types.Position(span.line, span.start), types.Position(span.line, span.end))


def _location(path: str, span: Span) -> types.Location:
    return types.Location(uri=from_fs_path(path) or path, range=_range(span))


class FFLServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, "v1")
        self.ffl = Workspace()

    def publish(self, diagnostics: dict[str, list[Diagnostic]], cause: str) -> None:
        """Publish per file, the file whose event caused the check last (a client waiting for it has all)."""
        for path, found in sorted(diagnostics.items(), key=lambda item: (item[0] == cause, item[0])):
            state = self.ffl.program(path).files.get(path)
            text = state.text if state is not None else Text("")
            uri = from_fs_path(path) or path
            document = self.workspace.text_documents.get(uri)  # an open document's version: the client drops stale ones
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
                uri=uri, diagnostics=[to_lsp(d, text) for d in found],
                version=document.version if document is not None else None))

    def run_check(self, path: str, job) -> None:
        with collector_paused():
            found = job(path)
        gc.freeze()
        self.publish(found, path)

    def lookup(self, uri: str):
        """(index, text, symbols) of a document; index None until it has parsed once."""
        path = _path(uri)
        state = self.ffl.program(path).files.get(path)
        symbols = self.ffl.symbols(path)
        if state is None:
            return None, Text(""), symbols
        return state.index, state.text, symbols


server = FFLServer()


@server.feature(types.INITIALIZE)
def initialize(ls: FFLServer, params: types.InitializeParams) -> None:
    folders = [_path(f.uri) for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [_path(params.root_uri)]
    ls.ffl = Workspace(folders)


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: FFLServer, params: types.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    ls.run_check(_path(doc.uri), lambda path: ls.ffl.opened(path, doc.text))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: FFLServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    await asyncio.sleep(0)  # changes already received are applied first, so a burst is checked once
    document = ls.workspace.get_text_document(uri)  # pygls has applied the (incremental) changes
    if document.version != params.text_document.version:
        return  # a newer change arrived: its own handler checks the newest text
    text = document.source
    ls.run_check(_path(uri), lambda path: ls.ffl.changed(path, text))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: FFLServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.run_check(_path(params.text_document.uri), ls.ffl.closed)


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: FFLServer, params: types.DidChangeWatchedFilesParams) -> None:
    """A file changed on disk (a checkout, another tool): re-read it unless an editor holds it open."""
    for change in params.changes:
        path = _path(change.uri)
        if path.endswith(".ffl") and path not in ls.ffl.open:
            ls.run_check(path, ls.ffl.closed)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: FFLServer, params: types.HoverParams) -> types.Hover | None:
    index, _, symbols = ls.lookup(params.text_document.uri)
    if index is None:
        return None
    pos = params.position
    occurrence = index.at(pos.line, pos.character)
    symbol = symbols.symbol(symbols.resolve(occurrence.target)) if occurrence is not None else None
    if symbol is None:
        return None
    return types.Hover(contents=types.MarkupContent(types.MarkupKind.Markdown, render(symbol, symbols)),
                       range=_range(occurrence.span))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: FFLServer, params: types.DefinitionParams) -> list[types.Location]:
    index, _, symbols = ls.lookup(params.text_document.uri)
    key = key_at(index, symbols, params.position.line, params.position.character) if index else None
    return [_location(p, s) for p, s in definitions(symbols, key)] if key else []


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
def find_references(ls: FFLServer, params: types.ReferenceParams) -> list[types.Location]:
    index, _, symbols = ls.lookup(params.text_document.uri)
    key = key_at(index, symbols, params.position.line, params.position.character) if index else None
    if key is None:
        return []
    return [_location(p, s) for p, s in references(symbols, key, params.context.include_declaration)]


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(ls: FFLServer, params: types.PrepareRenameParams) -> types.Range | None:
    index, _, symbols = ls.lookup(params.text_document.uri)
    occurrence = index.at(params.position.line, params.position.character) if index else None
    key = symbols.resolve(occurrence.target) if occurrence is not None else None
    return _range(occurrence.span) if key is not None and key[0] in RENAMEABLE and definitions(symbols, key) else None


@server.feature(types.TEXT_DOCUMENT_RENAME)
def do_rename(ls: FFLServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    index, _, symbols = ls.lookup(params.text_document.uri)
    key = key_at(index, symbols, params.position.line, params.position.character) if index else None
    if key is None:
        return None
    try:
        edits = rename(symbols, key, params.new_name)
    except RenameError as exc:
        raise ValueError(str(exc)) from None
    return types.WorkspaceEdit(changes={
        from_fs_path(path) or path: [types.TextEdit(range=_range(span), new_text=new) for span, new in found]
        for path, found in edits.items()
    })


@server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=[".", "(", ","]))
def completion(ls: FFLServer, params: types.CompletionParams) -> types.CompletionList:
    index, _, symbols = ls.lookup(params.text_document.uri)
    text = Text(ls.workspace.get_text_document(params.text_document.uri).source)
    items = complete(index, symbols, text, params.position.line, params.position.character)
    return types.CompletionList(is_incomplete=False, items=[item.to_lsp() for item in items])


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def outline(ls: FFLServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
    index, text, _ = ls.lookup(params.text_document.uri)
    return document_symbols(index, text) if index is not None else []


@server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
def folding(ls: FFLServer, params: types.FoldingRangeParams) -> list[types.FoldingRange]:
    return folding_ranges(Text(ls.workspace.get_text_document(params.text_document.uri).source))


@server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
def semantic(ls: FFLServer, params: types.SemanticTokensParams) -> types.SemanticTokens:
    index, _, symbols = ls.lookup(params.text_document.uri)
    return types.SemanticTokens(data=semantic_tokens(index, symbols) if index is not None else [])
