"""The compile pipeline: parse every source, merge, resolve, validate, build the Program.

Sources are processed in path order so the same set of files gives the same
program (and content hash) whatever order they were passed in. Warnings travel
beside the program (in a CompileResult), never inside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..program.facts import fill_facts
from ..program.gcpause import collector_paused
from ..program.model import FacetDecl, ImplicitDecl, Program, SchemaDecl, SourceFile
from ..program.scripts import assign_script_ids
from .diagnostics import CompileError, Diagnostic, FFLSyntaxError, errors_of, warnings_of
from .policies import extract_policies
from .prelude import parse_prelude
from .recursion import recursion_problems
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
    table = SymbolTable.build([parse_prelude(), *sorted(files, key=lambda f: f.path)])
    problems = list(table.diagnostics)
    problems += resolve(table)
    problems += extract_policies(table)  # ffl.Retry/Timeout/Queue mixins become activity options
    implicits: dict[str, list[ImplicitDecl]] = {}
    for entry in table.entries:
        if isinstance(entry.decl, ImplicitDecl) and entry.decl.call.facet:
            implicits.setdefault(entry.decl.call.facet, []).append(entry.decl)
    problems += check_decls(table, implicits)
    own = table.user_entries()  # the prelude's declarations stay out of the program: built-in calls are marked
    program = Program(
        facets={e.decl.qname: e.decl for e in own if isinstance(e.decl, FacetDecl)},
        schemas={e.decl.qname: e.decl for e in own if isinstance(e.decl, SchemaDecl)},
        implicits=implicits,
    )
    problems += recursion_problems(program)  # composed facets calling each other without end
    assign_script_ids(program)  # RunScript finds scripts by program hash and id
    fill_facts(program)  # what the interpreter reads instead of deriving it
    return program, problems


def _finish(problems: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(set(problems))


@dataclass
class CompileResult:
    """A compile's outcome: the program (None when there are errors) and every diagnostic, sorted."""

    program: Program | None
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return errors_of(self.diagnostics)

    @property
    def warnings(self) -> list[Diagnostic]:
        return warnings_of(self.diagnostics)

    def program_or_raise(self, strict: bool = False) -> Program:
        """The program; CompileError with the errors (and, when ``strict``, the warnings as errors)."""
        errors = self.errors + ([w.as_error() for w in self.warnings] if strict else [])
        if errors or self.program is None:
            raise CompileError(errors, [] if strict else self.warnings)
        return self.program


def compile_result(sources: list[tuple[str, str]]) -> CompileResult:
    """Compile (path, text) pairs; the program is set only when there are no errors."""
    with collector_paused():
        files, problems = parse_all(sources)
        program, found = analyse(files)
    diagnostics = _finish(problems + found)
    return CompileResult(None if errors_of(diagnostics) else program, diagnostics)


def compile_files_result(paths: list[str]) -> CompileResult:
    """Like compile_result for files and directories; unreadable files are errors."""
    sources, problems = read_sources(list(paths))
    result = compile_result(sources)
    if problems:
        return CompileResult(None, _finish(problems + result.diagnostics))
    return result


def check_sources(sources: list[tuple[str, str]]) -> list[Diagnostic]:
    """Every diagnostic (errors and warnings) of the program made of ``sources``, sorted."""
    return compile_result(sources).diagnostics


def compile_sources(sources: list[tuple[str, str]]) -> Program:
    """Compile (path, text) pairs into a Program; raise CompileError with every error."""
    return compile_result(sources).program_or_raise()


def check_files(paths: list[str]) -> list[Diagnostic]:
    """Like check_sources for files and directories; unreadable files are diagnostics."""
    return compile_files_result(paths).diagnostics


def compile_files(paths: list[str]) -> Program:
    return compile_files_result(paths).program_or_raise()
