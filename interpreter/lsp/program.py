"""One FFL program of the workspace, checked again incrementally as its files change.

A program is a set of files compiled together (what ``ffl check DIR`` reads).
Each check runs the compiler's own passes (``parse_all``'s parser and
``analyse``) on full trees of the files an edit can affect and on stubs of
the others, so its diagnostics are those of ``ffl check`` while its cost
follows the edit, not the program. A file is affected when it is the edited
one, or when the edit changed the interface of a name it writes or declares,
or moved a declaration of a name it declares too (its duplicate's message
cites the line), or when it has errors (unknown names and their did-you-mean
depend on every declaration).
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field

from ..compiler import Diagnostic, FFLSyntaxError, parse_source
from ..compiler.compile import analyse
from ..compiler.diagnostics import errors_of
from ..program.model import SourceFile
from .index import FileIndex, build_index, policy_mixins
from .stubs import FileStub, Interface, changed_names, file_stub, wanted_names, written_names
from .text import Text


@dataclass
class FileState:
    """What the program knows of one file: its text, its last good parse, its diagnostics."""

    path: str
    text: Text
    syntax: list[Diagnostic] = field(default_factory=list)
    tree: bytes | None = None
    """The last parse, pickled before the compiler filled it: a fresh copy costs less than a parse."""
    stub: FileStub | None = None
    interface: Interface = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    index: FileIndex | None = None
    """From the last text that parsed: features keep working while a line is half typed."""


class ProgramState:
    """The files of one program, their diagnostics and their indexes."""

    def __init__(self) -> None:
        self.files: dict[str, FileState] = {}

    def load(self, sources: dict[str, str]) -> None:
        """Check a whole program at once (the first time it is opened)."""
        for path, source in sources.items():
            self.files[path] = FileState(path, Text(source))
        trees = {path: self._parse(state) for path, state in self.files.items()}
        self._check({p: t for p, t in trees.items() if t is not None})

    def update(self, path: str, source: str) -> set[str]:
        """The file's new text (or a new file); returns the paths whose diagnostics were checked again."""
        state = self.files.get(path)
        before = state.interface if state is not None else {}
        if state is None:
            state = self.files[path] = FileState(path, Text(source))
        else:
            state.text = Text(source)
        tree = self._parse(state)
        affected = {path} | self._dependents(*changed_names(before, state.interface), path)
        trees = {path: tree} if tree is not None else {}
        for other in sorted(affected - {path}):
            parsed = self._reparse(self.files[other])
            if parsed is not None:
                trees[other] = parsed
        self._check(trees, affected)
        return affected

    def remove(self, path: str) -> set[str]:
        """Forget a deleted file; returns the paths checked again (it is among them, now clean)."""
        state = self.files.pop(path, None)
        if state is None:
            return set()
        affected = self._dependents(*changed_names(state.interface, {}), path)
        trees = {p: t for p in affected if (t := self._reparse(self.files[p])) is not None}
        self._check(trees, affected)
        return affected | {path}

    def _parse(self, state: FileState) -> SourceFile | None:
        """Parse the file's text, refreshing its syntax errors, stub and interface; None if it does not parse."""
        try:
            tree = parse_source(state.text.source, state.path)
        except FFLSyntaxError as exc:
            state.syntax, state.tree, state.stub, state.interface = exc.diagnostics, None, None, {}
            return None
        stubbed = file_stub(tree)
        state.syntax, state.tree, state.stub, state.interface = [], pickle.dumps(tree), stubbed, stubbed.interface()
        return tree

    def _reparse(self, state: FileState) -> SourceFile | None:
        """A fresh full tree of an unchanged file (the compiler fills trees in place, so each check needs one)."""
        return pickle.loads(state.tree) if state.tree is not None else None

    def _dependents(self, changed: set[str], moved: set[str], edited: str) -> set[str]:
        """Files other than ``edited`` whose diagnostics may change when declarations of these names change or move."""
        if not changed and not moved:
            return set()
        out = set()
        for path, state in self.files.items():
            if path == edited:
                continue
            index = state.index
            if (errors_of(state.diagnostics) or index is None or changed & (index.written | index.declared)
                    or moved & index.declared):
                out.add(path)
        return out

    def _check(self, trees: dict[str, SourceFile], affected: set[str] | None = None) -> None:
        """Analyse full ``trees`` with stubs of every other file that parses; store diagnostics and indexes."""
        others = [s.stub for p, s in self.files.items() if p not in trees and s.stub is not None]
        wanted = wanted_names(set().union(*map(written_names, trees.values())), others)
        stubs = [stub.assemble(wanted) for stub in others]
        mixins = {path: policy_mixins(tree) for path, tree in trees.items()}
        _, found = analyse([*trees.values(), *stubs])
        by_file: dict[str, list[Diagnostic]] = {}
        for diagnostic in set(found):
            by_file.setdefault(diagnostic.file, []).append(diagnostic)
        for path in self.files if affected is None else affected:
            state = self.files.get(path)
            if state is None:
                continue
            state.diagnostics = sorted(state.syntax + (by_file.get(path, []) if path in trees else []))
            if path in trees:
                state.index = build_index(trees[path], state.text, mixins[path])
