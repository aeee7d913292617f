"""The editor's workspace: which files form a program, their texts (open editors win over the disk).

A program is a folder of ``.ffl`` files with its subfolders (what ``ffl check
DIR`` reads). A file belongs to the highest folder above it, inside the
workspace, from which every folder down to the file holds ``.ffl`` files
itself: ``examples/calc`` and ``examples/hello`` stay two programs, while
``osm/cache/*.ffl`` joins ``osm/*.ffl``.

Paths are absolute but keep their symbolic links, so a file found on disk has
the path of the URI the editor sends for it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..compiler import Diagnostic
from .program import ProgramState
from .symbols import Symbols


def _holds_ffl(folder: Path) -> bool:
    return any(p.is_file() for p in folder.glob("*.ffl"))


class Workspace:
    def __init__(self, folders: list[str] | None = None):
        self.folders = [Path(os.path.abspath(f)) for f in folders or []]
        self.programs: dict[Path, ProgramState] = {}
        self.open: dict[str, str] = {}
        self._roots: dict[str, Path] = {}

    def root_of(self, path: str) -> Path:
        """The program folder of ``path`` (see the module's docstring); remembered per path."""
        root = self._roots.get(path)
        if root is None:
            root = Path(os.path.abspath(path)).parent
            while root.parent != root and _holds_ffl(root.parent) and self._inside(root.parent):
                root = root.parent
            self._roots[path] = root
        return root

    def _inside(self, folder: Path) -> bool:
        return not self.folders or any(folder == f or f in folder.parents for f in self.folders)

    def program(self, path: str) -> ProgramState:
        """The program ``path`` belongs to, checked in full the first time it is asked for."""
        root = self.root_of(path)
        program = self.programs.get(root)
        if program is None:
            program = self.programs[root] = ProgramState()
            sources: dict[str, str] = {}
            for file in sorted(root.rglob("*.ffl")):
                if file.is_file():
                    name = str(file)
                    sources[name] = self.open[name] if name in self.open else self._read(file)
            sources.update({p: t for p, t in self.open.items() if p not in sources and self.root_of(p) == root})
            program.load(sources)
        return program

    def symbols(self, path: str) -> Symbols:
        return Symbols(self.program(path))

    def opened(self, path: str, text: str) -> dict[str, list[Diagnostic]]:
        """An editor opened ``path``: the diagnostics to publish (every file, when its program is new)."""
        is_new = self.root_of(path) not in self.programs
        self.open[path] = text
        program = self.program(path)
        if is_new:
            return {p: s.diagnostics for p, s in program.files.items()}
        state = program.files.get(path)
        if state is not None and state.text.source == text.replace("\r\n", "\n"):
            return {path: state.diagnostics}
        return self._publish(program, program.update(path, text))

    def changed(self, path: str, text: str) -> dict[str, list[Diagnostic]]:
        self.open[path] = text
        program = self.program(path)
        return self._publish(program, program.update(path, text))

    def closed(self, path: str) -> dict[str, list[Diagnostic]]:
        """An editor closed ``path``, or it changed on disk: read it again (or forget it, if gone)."""
        self.open.pop(path, None)
        program = self.program(path)
        file = Path(path)
        if not file.is_file():
            return self._publish(program, program.remove(path))
        return self._publish(program, program.update(path, self._read(file)))

    def _publish(self, program: ProgramState, paths: set[str]) -> dict[str, list[Diagnostic]]:
        return {p: program.files[p].diagnostics if p in program.files else [] for p in paths}

    @staticmethod
    def _read(file: Path) -> str:
        try:
            return file.read_bytes().decode("utf-8-sig", errors="replace")
        except OSError:
            return ""
