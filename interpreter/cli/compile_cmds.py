"""``ffl check``, ``ffl compile`` and ``ffl graph``: the compile side of the command line.

Convention: diagnostics go to standard output, one per line as
``file:line:col: message``, and the exit status is 1 when there are any; a
one-line summary goes to standard error. Results (JSON, drawings) go to
standard output or to ``-o FILE``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..compiler import CompileError, Diagnostic, check_files, compile_files
from ..compiler.graph import GraphError, render
from ..compiler.sources import expand
from ..program.serialize import program_to_json

_DIAGNOSTICS = "Diagnostics are printed to stdout as 'file:line:col: message' (exit status 1)."


def _report(diagnostics: list[Diagnostic]) -> int:
    for diagnostic in diagnostics:
        print(diagnostic)
    count = len(diagnostics)
    print(f"error: {count} problem{'s' if count != 1 else ''} found", file=sys.stderr)
    return 1


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
    diagnostics = check_files(args.files)
    if diagnostics:
        return _report(diagnostics)
    program = compile_files(args.files)
    files, _ = expand(args.files)
    workflows = len(program.workflows)
    print(f"ok: {len(files)} file{'s' if len(files) != 1 else ''}, "
          f"{workflows} workflow{'s' if workflows != 1 else ''}")
    return 0


def _compile(args: argparse.Namespace) -> int:
    try:
        program = compile_files(args.files)
    except CompileError as exc:
        return _report(exc.diagnostics)
    return _write(program_to_json(program) + "\n", args.output)


def _graph(args: argparse.Namespace) -> int:
    try:
        program = compile_files(args.files)
    except CompileError as exc:
        return _report(exc.diagnostics)
    name = args.workflow
    if name is None:
        if len(program.workflows) != 1:
            listed = ", ".join(program.workflows) or "(none)"
            print(f"error: choose a workflow with --workflow; available workflows: {listed}", file=sys.stderr)
            return 2
        name = program.workflows[0]
    try:
        text = render(program, name, args.format)
    except GraphError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return _write(text, args.output)


def register(subparsers) -> None:
    check = subparsers.add_parser(
        "check", help="validate FFL files", description=f"Validate FFL files and directories. {_DIAGNOSTICS}"
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="FFL files or directories of *.ffl")
    check.set_defaults(func=_check)

    comp = subparsers.add_parser(
        "compile",
        help="compile FFL to program JSON",
        description=f"Compile FFL files to canonical program JSON (stdout unless -o). {_DIAGNOSTICS}",
    )
    comp.add_argument("files", nargs="+", metavar="FILE", help="FFL files or directories of *.ffl")
    comp.add_argument("-o", "--output", metavar="PATH", help="write the JSON here instead of stdout")
    comp.set_defaults(func=_compile)

    graph = subparsers.add_parser(
        "graph",
        help="draw a workflow's steps and dependencies",
        description=f"Draw a workflow as Mermaid or Graphviz DOT. {_DIAGNOSTICS} "
        "An unknown workflow is reported on stderr with the available ones (exit status 2).",
    )
    graph.add_argument("files", nargs="+", metavar="FILE", help="FFL files or directories of *.ffl")
    graph.add_argument("--workflow", "-w", metavar="NAME", help="qualified or unique short workflow name")
    graph.add_argument("--format", "-f", choices=("mermaid", "dot"), default="mermaid")
    graph.add_argument("-o", "--output", metavar="PATH", help="write the drawing here instead of stdout")
    graph.set_defaults(func=_graph)
