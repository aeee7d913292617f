"""The compile pipeline: parse every source, merge, resolve, validate, build the Program.

Sources are processed in path order so the same set of files gives the same
program (and content hash) whatever order they were passed in.
"""

from __future__ import annotations

from ..program.model import FacetDecl, ImplicitDecl, Program, SchemaDecl, SourceFile
from .diagnostics import CompileError, Diagnostic, FFLSyntaxError
from .gcpause import collector_paused
from .resolve import resolve
from .sources import read_sources
from .symbols import SymbolTable
from .validate_decls import check_decls


def parse_all(sources: list[tuple[str, str]]) -> tuple[list[SourceFile], list[Diagnostic]]:
    """Parse each source; a file with syntax errors contributes its diagnostics, not a tree."""
    from .parser import parse_source

    files: list[SourceFile] = []
    problems: list[Diagnostic] = []
    for path, text in sorted(sources, key=lambda s: s[0]):
        try:
            files.append(parse_source(text, path))
        except FFLSyntaxError as exc:
            problems.extend(exc.diagnostics)
        except Exception as exc:  # noqa: BLE001 - a parser bug must not become a traceback
            problems.append(Diagnostic(path, 1, 1, f"internal parser error: {type(exc).__name__}: {exc}"))
    return files, problems


def analyse(files: list[SourceFile]) -> tuple[Program, list[Diagnostic]]:
    """Merge, resolve and validate parsed files (filled in place, so pass fresh parses).

    The Program is complete only when no diagnostics are returned.
    """
    table = SymbolTable.build(sorted(files, key=lambda f: f.path))
    problems = list(table.diagnostics)
    problems += resolve(table)
    implicits: dict[str, list[ImplicitDecl]] = {}
    for entry in table.entries:
        if isinstance(entry.decl, ImplicitDecl) and entry.decl.call.facet:
            implicits.setdefault(entry.decl.call.facet, []).append(entry.decl)
    problems += check_decls(table, implicits)
    program = Program(
        facets={e.decl.qname: e.decl for e in table.entries if isinstance(e.decl, FacetDecl)},
        schemas={e.decl.qname: e.decl for e in table.entries if isinstance(e.decl, SchemaDecl)},
        implicits=implicits,
    )
    return program, problems


def _finish(problems: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(set(problems))


def check_sources(sources: list[tuple[str, str]]) -> list[Diagnostic]:
    """Every diagnostic of the program made of ``sources`` ((path, text) pairs), sorted."""
    with collector_paused():
        files, problems = parse_all(sources)
        _, found = analyse(files)
    return _finish(problems + found)


def compile_sources(sources: list[tuple[str, str]]) -> Program:
    """Compile (path, text) pairs into a Program; raise CompileError with every diagnostic."""
    with collector_paused():
        files, problems = parse_all(sources)
        program, found = analyse(files)
    problems = _finish(problems + found)
    if problems:
        raise CompileError(problems)
    return program


def check_files(paths: list[str]) -> list[Diagnostic]:
    """Like check_sources for files and directories; unreadable files are diagnostics."""
    sources, problems = read_sources(list(paths))
    return _finish(problems + check_sources(sources))


def compile_files(paths: list[str]) -> Program:
    sources, problems = read_sources(list(paths))
    if problems:
        raise CompileError(_finish(problems + check_sources(sources)))
    return compile_sources(sources)
