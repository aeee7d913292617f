"""Reading FFL sources from paths: files as given, directories as all ``*.ffl`` inside, sorted."""

from __future__ import annotations

from pathlib import Path

from .diagnostics import Diagnostic


def expand(paths: list[str]) -> tuple[list[str], list[Diagnostic]]:
    """Files to read, in order; a directory contributes its ``*.ffl`` files (recursively, sorted)."""
    files: list[str] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(str(p) for p in path.rglob("*.ffl") if p.is_file())
            if not found:
                problems.append(Diagnostic(raw, 1, 1, "directory holds no .ffl files"))
            files.extend(found)
        else:
            files.append(raw)
    return files, problems


def read_sources(paths: list[str]) -> tuple[list[tuple[str, str]], list[Diagnostic]]:
    """(path, text) pairs for every readable file; unreadable ones become diagnostics."""
    files, problems = expand(paths)
    sources: list[tuple[str, str]] = []
    for name in files:
        try:
            data = Path(name).read_bytes()
            # utf-8-sig: editors that save a byte-order mark still give a readable source.
            sources.append((name, data.decode("utf-8-sig")))
        except UnicodeDecodeError as exc:
            line = exc.object[: exc.start].count(b"\n") + 1
            column = exc.start - (exc.object.rfind(b"\n", 0, exc.start) + 1) + 1
            problems.append(Diagnostic(name, line, column, f"cannot read file: not UTF-8 text ({exc.reason})"))
        except OSError as exc:
            problems.append(Diagnostic(name, 1, 1, f"cannot read file: {exc.strerror or exc}"))
    return sources, problems
