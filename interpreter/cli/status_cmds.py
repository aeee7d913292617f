"""``ffl status`` and ``ffl graph --run``: what a run is doing, as text, JSON or a coloured graph.

Exit status tells the run's state, so scripts can branch on it: 0
completed, 1 failed (or timed out), 2 cancelled or terminated, 3 still
running, 4 when the state could not be read (server unreachable, no such
run). ``--watch`` refreshes until the run closes; ``--json`` prints one JSON
object per refresh.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys

from ..compiler.graph import GraphError, apply_states, build_graph, draw, find_workflow
from .connect import (
    add_connection_args,
    connect,
    core_logs_to_python_logging,
    options_from_args,
    server_error_line,
)
from .flags import FlagError, add_either, either
from .run_view import RunView, fetch_view, find_handle, pinned_program
from .status_view import EXIT_UNKNOWN, dumps, exit_code, render, step_rows

GRAPH_FORMATS = ("mermaid", "dot", "svg")


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class StatusError(Exception):
    """A one-line reason ``ffl status`` cannot tell the run's state."""


def svg_from_dot(text: str, flag: str = "--graph") -> str:
    """Graphviz renders the SVG; without it, a clear error naming ``flag dot`` (the DOT text is one flag away)."""
    dot = shutil.which("dot")
    if dot is None:
        raise StatusError(f"{flag} svg needs Graphviz's 'dot' on PATH (e.g. apt-get install graphviz); "
                          f"{flag} dot prints the DOT text to render elsewhere")
    done = subprocess.run([dot, "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise StatusError(f"dot failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return done.stdout


async def run_graph(client, handle, view: RunView, fmt: str, flag: str = "--graph") -> str:
    """The run's workflow drawn from the program it pinned, coloured by its steps' states."""
    program, _ = await pinned_program(client, handle)
    if program is None:
        raise StatusError(f"run {view.workflow_id} has not pinned its program yet (no LoadProgram result in its "
                          "history): nothing to draw")
    try:
        decl = find_workflow(program, view.workflow)
    except GraphError as exc:
        raise StatusError(str(exc)) from None
    states = {str(row.get("path", "")): row["display"] for row in step_rows(view)}
    graph = apply_states(build_graph(decl, program), states, closed=view.closed_run)
    text = draw(graph, "dot" if fmt == "svg" else fmt)
    return svg_from_dot(text, flag) if fmt == "svg" else text


def _write(text: str, output: str | None) -> None:
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


async def _show(args: argparse.Namespace) -> int:
    options = options_from_args(args)
    client = await connect(options, mongo_uri=getattr(args, "mongo", None))
    handle = await find_handle(client, args.id)
    graph = getattr(args, "graph", None)
    live = None
    if args.watch and not args.json and not graph and sys.stdout.isatty():
        from rich.console import Console
        from rich.live import Live

        live = Live(console=Console(highlight=False), auto_refresh=False, transient=False)
        live.start()
    try:
        while True:
            view = await fetch_view(client, handle, query_timeout=args.timeout)
            if graph:
                _write(await run_graph(client, handle, view, graph, getattr(args, "graph_flag", "--graph")),
                       getattr(args, "output", None))
            elif args.json:
                _write(dumps(view, values=not args.brief), None)
            elif live is not None:
                from rich.text import Text

                live.update(Text("\n".join(render(view, values=not args.brief))), refresh=True)
            else:
                _write("\n".join(render(view, values=not args.brief)), None)
            if not args.watch or view.closed_run:
                return exit_code(view.status)
            await asyncio.sleep(args.interval)
            if live is None and not args.json and not graph:
                print(flush=True)
    finally:
        if live is not None:
            live.stop()


def _from_mirror(args: argparse.Namespace, uri: str) -> int | None:
    from .mirror_cmds import status_from_mongo

    shown = status_from_mongo(args.id, uri, args.database, brief=args.brief, missing_ok=True)
    if shown is None:
        _err(f"run {args.id} is not in the mirror at {uri}; asking the workflow")
    return shown


def status(args: argparse.Namespace) -> int:
    if hasattr(args, "id_flag"):
        try:
            args.id = either(args, "id", "--workflow-id")
        except FlagError as err:
            _err(f"ffl status: {err}")
            return EXIT_UNKNOWN
    mongo_uri = args.mongo or os.environ.get("MONGODB_URI")
    if mongo_uri and not (args.json or args.watch or args.graph):  # the mirror first; else ask the workflow
        shown = _from_mirror(args, mongo_uri)
        if shown is not None:
            return shown
    core_logs_to_python_logging()
    options = options_from_args(args)
    try:
        return asyncio.run(_show(args))
    except KeyboardInterrupt:
        return 130
    except StatusError as exc:
        _err(f"ffl status: {exc}")
        return EXIT_UNKNOWN
    except BrokenPipeError:
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - quiet exit after `| head`
        return 0
    except Exception as exc:  # noqa: BLE001 - one line, never a traceback
        _err(f"ffl status: {_not_found(exc, args.id) or server_error_line(exc, options.address)}")
        return EXIT_UNKNOWN


def _not_found(error: BaseException, target: str) -> str | None:
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(error, RPCError) and error.status == RPCStatusCode.NOT_FOUND:
        return f"no run '{target}' ({error.message})"
    return None


def graph_of_run(args: argparse.Namespace) -> int:
    """``ffl graph --run RUN``: the same as ``ffl status RUN --graph FORMAT``."""
    args.id, args.graph, args.json, args.watch, args.brief = args.run, args.format, False, False, True
    args.graph_flag = "--format"  # what to name in a message: ffl graph's flag, not ffl status's
    args.timeout, args.interval, args.mongo, args.database = 10.0, 1.0, None, None
    code = status(args)
    return 0 if code in (0, 1, 2, 3) else 1


def add_status_args(status_parser: argparse.ArgumentParser) -> None:
    add_either(status_parser, "id", "RUN_ID_OR_WORKFLOW_ID", ("--workflow-id", "-w"), "the run")
    status_parser.add_argument("--brief", action="store_true", help="omit each step's returns (the tree only)")
    status_parser.add_argument("--json", action="store_true", help="machine-readable status (one object per refresh)")
    status_parser.add_argument("--watch", "-W", action="store_true", help="refresh until the run closes")
    status_parser.add_argument("--interval", type=float, default=2.0, help="seconds between --watch refreshes")
    status_parser.add_argument("--graph", choices=GRAPH_FORMATS,
                               help="draw the workflow coloured by each step's state instead of the tree")
    status_parser.add_argument("-o", "--output", metavar="PATH", help="write the --graph drawing here")
    status_parser.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the steps query")
    status_parser.add_argument("--mongo", metavar="URI",
                               help="read the run from this MongoDB mirror (env MONGODB_URI)")
    status_parser.add_argument("--database", help="MongoDB database (default: the URI's, else 'facetwork')")
    add_connection_args(status_parser)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "status", help="show a run's state and steps (exit status: 0 completed, 1 failed, 2 cancelled, 3 running)",
        description="Show a run: its state, the failing step and cause, and each step — done, running on a "
        "worker, waiting for a worker on its queue, retrying, failed, cancelled. Exit status: 0 completed, "
        "1 failed or timed out, 2 cancelled or terminated, 3 running, 4 state unknown (server unreachable, "
        "no such run). With MONGODB_URI (or --mongo) the tree comes from the mirror unless --json, --watch "
        "or --graph ask for the live run.",
    )
    add_status_args(parser)
    parser.set_defaults(func=status)
