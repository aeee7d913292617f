"""``ffl check``, ``ffl compile`` and ``ffl graph``: the compile side of the command line.

Convention: errors go to standard output, one per line as
``file:line:col: message``, and the exit status is 1 when there are any; a
one-line summary goes to standard error. Warnings go to standard error as
``file:line:col: warning: message`` and never fail a command unless
``--strict`` makes them errors. Results (JSON, drawings) go to standard
output or to ``-o FILE``; they never depend on whether warnings were shown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..compiler import CompileError, Diagnostic, compile_files_result
from ..compiler.graph import GraphError, render
from ..compiler.sources import expand
from ..program.model import Program
from ..program.serialize import content_hash, program_to_json
from .connect import add_connection_args

_DIAGNOSTICS = ("Errors are printed to stdout as 'file:line:col: message' (exit status 1); warnings to stderr "
                "as 'file:line:col: warning: message' (exit status 0 unless --strict).")  # fmt: skip


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'s' if count != 1 else ''}"


def print_warnings(warnings: list[Diagnostic]) -> None:
    """Warnings to stderr, one per line (``file:line:col: warning: message``)."""
    for warning in warnings:
        print(warning, file=sys.stderr)


def _report(diagnostics: list[Diagnostic], warnings: list[Diagnostic] = ()) -> int:
    print_warnings(list(warnings))
    for diagnostic in diagnostics:
        print(diagnostic)
    print(f"error: {_plural(len(diagnostics), 'problem')} found", file=sys.stderr)
    return 1


def _program(args: argparse.Namespace) -> tuple[Program | None, int]:
    """Compile ``args.files``, printing warnings and errors; (program, 0) or (None, exit status)."""
    result = compile_files_result(args.files)
    try:
        program = result.program_or_raise(strict=getattr(args, "strict", False))
    except CompileError as exc:
        return None, _report(exc.diagnostics, exc.warnings)
    print_warnings(result.warnings)
    return program, 0


def _write(text: str, output: str | None) -> int:
    if not output:
        sys.stdout.write(text)
        return 0
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"error: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _check(args: argparse.Namespace) -> int:
    program, status = _program(args)
    if program is None:
        return status
    files, _ = expand(args.files)
    print(f"ok: {_plural(len(files), 'file')}, {_plural(len(program.workflows), 'workflow')}")
    return 0


def _compile(args: argparse.Namespace) -> int:
    program, status = _program(args)
    if program is None:
        return status
    status = _write(program_to_json(program) + "\n", args.output)
    if status == 0:  # the hash runs pin and ffl publish prints; stderr, so the JSON on stdout stays clean
        print(f"program {content_hash(program)}" + (f" written to {args.output}" if args.output else ""),
              file=sys.stderr)
    return status


def _graph(args: argparse.Namespace) -> int:
    if args.run:  # a live run, coloured by its steps' states
        from .status_cmds import graph_of_run

        return graph_of_run(args)
    if not args.files:
        print("error: give FILEs to draw, or --run RUN to draw a run", file=sys.stderr)
        return 2
    program, status = _program(args)
    if program is None:
        return status
    name = args.workflow
    if name is None:
        if len(program.workflows) != 1:
            listed = ", ".join(program.workflows) or "(none)"
            print(f"error: choose a workflow with --workflow; available workflows: {listed}", file=sys.stderr)
            return 2
        name = program.workflows[0]
    try:
        text = render(program, name, "dot" if args.format == "svg" else args.format)
        if args.format == "svg":
            from .status_cmds import StatusError, svg_from_dot

            try:
                text = svg_from_dot(text, "--format")
            except StatusError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
    except GraphError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _write(text, args.output)


def register(subparsers) -> None:
    check = subparsers.add_parser(
        "check", help="validate FFL files", description=f"Validate FFL files and directories. {_DIAGNOSTICS}"
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="FFL files or directories of *.ffl")
    check.add_argument("--strict", action="store_true", help="treat warnings as errors")
    check.set_defaults(func=_check)

    comp = subparsers.add_parser(
        "compile",
        help="compile FFL to program JSON",
        description=f"Compile FFL files to canonical program JSON (stdout unless -o); its content hash, the "
        f"one runs pin and ffl publish prints, goes to stderr. {_DIAGNOSTICS}",
    )
    comp.add_argument("files", nargs="+", metavar="FILE", help="FFL files or directories of *.ffl")
    comp.add_argument("-o", "--output", metavar="PATH", help="write the JSON here instead of stdout")
    comp.add_argument("--strict", action="store_true", help="treat warnings as errors")
    comp.set_defaults(func=_compile)

    graph = subparsers.add_parser(
        "graph",
        help="draw a workflow's steps and dependencies (or a run's, coloured by state, with --run)",
        description=f"Draw a workflow as Mermaid, Graphviz DOT or SVG (SVG needs Graphviz's dot). {_DIAGNOSTICS} "
        "An unknown workflow is reported on stderr with the available ones (exit status 2). With --run, "
        "draw a run's workflow from the program it pinned, each step coloured by its state "
        "(the same as ffl status RUN --graph FORMAT).",
    )
    graph.add_argument("files", nargs="*", metavar="FILE", help="FFL files or directories of *.ffl")
    graph.add_argument("--workflow", "-w", metavar="NAME", help="qualified or unique short workflow name")
    graph.add_argument("--format", "-f", choices=("mermaid", "dot", "svg"), default="mermaid")
    graph.add_argument("-o", "--output", metavar="PATH", help="write the drawing here instead of stdout")
    graph.add_argument("--run", metavar="RUN_ID_OR_WORKFLOW_ID", help="draw this run (Temporal connection "
                       "from --address/--namespace or TEMPORAL_* variables)")
    add_connection_args(graph)
    graph.set_defaults(func=_graph)
