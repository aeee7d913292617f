"""The ``ffl`` command: one subcommand per job, each defined in its own module.

Every module listed in ``_COMMAND_MODULES`` exposes ``register(subparsers)``,
adding its subcommands with ``set_defaults(func=...)``; ``func(args)`` returns
the exit status. The process ends with a flush and ``os._exit`` because
temporalio's native threads can crash the interpreter during normal exit; a
reader that went away (``ffl publish | head``) ends it quietly with 141.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

_COMMAND_MODULES = (
    "interpreter.cli.compile_cmds",
    "interpreter.cli.run_cmds",
    "interpreter.cli.status_cmds",
    "interpreter.cli.search_attrs",
    "interpreter.cli.mirror_cmds",
    "interpreter.cli.control_cmds",
    "interpreter.cli.recover_cmds",
    "interpreter.cli.testing_cmds",
    "interpreter.cli.lsp_cmd",
)


EXIT_STATUSES = """exit status:
  0  done: compiled, run completed, command did what it says
  1  failed: compile errors, a failed or timed-out run, a command that could not act (its reason on stderr)
  2  bad usage (unknown flag, bad --input); ffl status: the run was cancelled or terminated
  3  ffl status: the run is still running
  4  ffl status: the state is unknown (server unreachable, no such run)
  130  interrupted (Ctrl-C)"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ffl", description="Compile FFL and run it on Temporal.", epilog=EXIT_STATUSES,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def run(argv: list[str] | None = None) -> int:
    from ..activities.redact import redact_stderr

    redact_stderr()  # no credentials of a URI ever reach the terminal or a log file
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("ffl: interrupted", file=sys.stderr)
        return 130


def main(argv: list[str] | None = None) -> None:
    try:
        status = run(argv)
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `ffl ... | head`: the reader has gone; end quietly, as a SIGPIPE'd tool would
        status = 141
    os._exit(status)
