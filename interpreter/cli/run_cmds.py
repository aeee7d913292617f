"""``ffl run``, ``ffl publish``, ``ffl status`` and ``ffl worker``: the runtime side of the command line.

Convention: results go to standard output (``run`` prints the workflow's
returns as one JSON line); everything else — Web UI address, progress,
errors — goes to standard error. Exit status 0 on success, 1 on a failed
compile or run, 2 on bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import shlex
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..activities.handlers import HandlerLoadError, HandlerRegistry, load_handlers
from ..activities.program_store import LocalProgramStore, PublishConflict, Published, trim_program
from ..activities.redact import redact
from ..compiler import CompileError, compile_files_result
from ..program.config import RuntimeConfig
from ..program.constants import INTERPRETER_QUEUE, WARNINGS_QUERY
from ..program.display import program_details, program_line
from ..program.exprtext import expr_text
from ..program.model import Program
from ..program.runinfo import run_memo, source_files
from ..program.serialize import program_to_json
from ..program.values import MAX_JSON_DEPTH, ValueProblem, dumps_checked, loads_bounded
from .connect import (
    ConnectionFailed,
    add_connection_args,
    connect,
    core_logs_to_python_logging,
    options_from_args,
    server_error_line,
)
from .logs import configure_logging
from .progress import print_final_counts, show_progress
from .search_attrs import with_search_attributes
from .worker_main import add_worker_args, build_worker, load_config, open_mirror, run_worker


def _err(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _compile(files: list[str]) -> Program | None:
    """The program (after printing its warnings), or None after printing every diagnostic; all to stderr."""
    result = compile_files_result(files)
    for warning in result.warnings:
        _err(str(warning))
    try:
        return result.program_or_raise()
    except CompileError as exc:
        for diagnostic in exc.diagnostics:
            _err(str(diagnostic))
        count = len(exc.diagnostics)
        _err(f"error: {count} problem{'s' if count != 1 else ''} found")
        return None


def event_facets(program: Program, workflow: str, config: RuntimeConfig) -> dict[str, str]:
    """Event (and prompt) facets ``workflow`` can reach → their task queue."""
    reachable = Program.model_validate_json(trim_program(program_to_json(program), workflow))
    return {
        name: config.queue_for(name, decl.queue)
        for name, decl in sorted(reachable.facets.items())
        if decl.kind == "event" or decl.prompt is not None
    }


def _example_value(type_name: str, depth: int) -> Any:
    if depth:
        return []
    return {"Long": 0, "Int": 0, "Double": 0.0, "String": "", "Boolean": False, "Json": None}.get(type_name, {})


def start_command(program: Program, workflow: str, queue: str = INTERPRETER_QUEUE) -> str:
    """The Temporal CLI line starting ``workflow``, with example values for its required parameters."""
    decl = program.facets[workflow]
    example = {p.name: _example_value(p.type.name, p.type.depth) for p in decl.params if p.default is None}
    payload = json.dumps(example, separators=(", ", ": "))
    return f"temporal workflow start --type {workflow} --task-queue {queue} --input {shlex.quote(payload)}"


# --------------------------------------------------------------------------- publish


def _publish(args: argparse.Namespace) -> int:
    program = _compile(args.files)
    if program is None:
        return 1
    mongo_uri = args.mongo or os.environ.get("MONGODB_URI")
    if mongo_uri:  # where interpreter workers started with the same URI load programs
        from pymongo.errors import PyMongoError

        from ..activities.mirror import database_from_uri, publish_to_mongo

        database = database_from_uri(mongo_uri, args.database)
        try:
            done = publish_to_mongo(program, mongo_uri, database, replace=args.replace)
        except PyMongoError as exc:
            _err(f"error: cannot publish to MongoDB at {redact(mongo_uri)}: {redact(str(exc))}")
            return 1
        except PublishConflict as exc:
            _err(f"error: not published to MongoDB database {database}: {exc}")
            return 1
        print(f"published {done.hash} to MongoDB database {database} (flows, workflows)")
        _report_publish(done)
    if args.registry or not mongo_uri:
        store = LocalProgramStore(args.registry) if args.registry else LocalProgramStore()
        try:
            done = store.publish_report(program, replace=args.replace)
        except PublishConflict as exc:
            _err(f"error: not published to {store.root}: {exc}")
            return 1
        print(f"published {done.hash} to {store.root}")
        _report_publish(done)
    if not program.workflows:
        print("no workflows in this program (nothing to start)")
    for name in program.workflows:
        decl = program.facets[name]
        params = ", ".join(
            f"{p.name}: {'[' * p.type.depth}{p.type.name}{']' * p.type.depth}"
            + (f" = {expr_text(p.default)}" if p.default is not None else "")
            for p in decl.params
        )
        print(f"workflow {name}({params})")
        print(f"  {start_command(program, name)}")
    return 0


def _report_publish(done: Published) -> None:
    if done.repaired:
        print(f"  repaired the stored copy of program {done.hash}, which had been altered")
    for name, old in sorted(done.replaced.items()):
        print(f"  workflow {name} now points at this program (it replaces program {old})")


# --------------------------------------------------------------------------- run


def local_activities(args: argparse.Namespace, embedded: bool) -> bool:
    """Whether the in-process interpreter runs handlers as local activities (no server round trip per step).

    Only where the run ends with the command — on a shared server it outlives this process, and its steps
    must not depend on it — and only when nobody reads the Web UI (``--no-ui``) or ``--local-activities``
    asks: a local activity is a marker in history, without its own summary, timing or retries.
    """
    return embedded and (args.no_ui or args.local_activities)


def private_queues(task_queue: str | None, embedded: bool, suffix: str, program: Program, workflow: str,
                   config: RuntimeConfig, registry: HandlerRegistry) -> tuple[str, RuntimeConfig]:
    """The interpreter queue of an ``ffl run`` and the config its worker pins (queue overrides included).

    On a shared server (``--address``) without ``--task-queue`` the run gets queues of its own —
    ``ffl-run-<suffix>`` for the interpreter, ``<queue>-run-<suffix>`` for each queue whose handlers this
    command holds — so no other worker, with another registry or other handlers, can take its tasks.
    Facets without a handler here stay on their shared queues, for the workers serving those.
    """
    if task_queue or embedded:
        return task_queue or INTERPRETER_QUEUE, config
    overrides = {name: f"{queue}-run-{suffix}" for name, queue in event_facets(program, workflow, config).items()
                 if name in registry}
    return f"{INTERPRETER_QUEUE}-run-{suffix}", config.model_copy(update={"queues": {**config.queues, **overrides}})


def _parse_input(text: str) -> dict[str, Any]:
    if text.startswith("@"):
        text = Path(text[1:]).read_text(encoding="utf-8")
    value = loads_bounded(text) if text.strip() else {}  # no NaN, no nesting past MAX_JSON_DEPTH
    if not isinstance(value, dict):
        raise ValueError(f"--input must be a JSON object of parameters, got {type(value).__name__}")
    return value


def describe_failure(exc: BaseException) -> list[str]:
    """The failure and its causes, outermost first: each message, prefixed by its type unless it names it."""
    lines: list[str] = []
    cause: BaseException | None = getattr(exc, "cause", None) or exc.__cause__
    while cause is not None:
        kind = getattr(cause, "type", None) or type(cause).__name__
        message = getattr(cause, "message", None) or str(cause)
        line = message if kind in message else f"{kind}: {message}"
        if not lines or lines[-1] != line:
            lines.append(line)
        cause = cause.__cause__
    return lines or [str(exc)]


@dataclass
class _Services:
    """What a run needs around it: the server address, the program store, the optional mirror."""

    options: Any
    embedded: bool
    store: Any
    server: Any = None
    mongo: Any = None
    mirror: Any = None

    def where(self) -> str:
        ui = self.server.extra.get("ui_url") if self.server is not None else None
        text = f"Web UI {ui}" if ui else f"server {self.options.address}"
        return text + (f", mirror {self.mongo.extra['uri']}" if self.mongo is not None else "")


async def _services(args: argparse.Namespace, stack: contextlib.AsyncExitStack) -> _Services:
    """Start (or point at) the Temporal server, the program store and the Mongo mirror; ``stack`` stops them."""
    options = options_from_args(args)
    embedded = not (args.address or os.environ.get("TEMPORAL_ADDRESS"))
    server = mongo = None
    if embedded:
        from ..local import start_temporal

        server = await asyncio.to_thread(start_temporal, ui=not args.no_ui)
        stack.push_async_callback(asyncio.to_thread, server.stop)
        options.address = server.address
        ui = server.extra.get("ui_url")
        if args.keep_server or sys.stderr.isatty():  # off a terminal the server is gone before anyone looks
            _err(f"Temporal dev server at {server.address}" + (f", Web UI: {ui}" if ui else ""))
    registry_dir = args.registry
    if registry_dir is None and embedded:
        registry_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="ffl-registry-"))
    store = LocalProgramStore(registry_dir) if registry_dir else LocalProgramStore()
    mongo_uri = args.mongo or os.environ.get("MONGODB_URI")
    if args.local_mongo:
        from ..local import start_mongo

        mongo = await asyncio.to_thread(start_mongo)
        stack.push_async_callback(asyncio.to_thread, mongo.stop)
        mongo_uri = mongo.extra["uri"]
        _err(f"Mongo mirror (secantusdb) at {mongo_uri}")
    return _Services(options, embedded, store, server, mongo, mirror=mongo_uri)


async def _publish_to_mirror(program: Program, uri: str) -> None:
    """Also store the program in the mirror's flows/workflows, so runners reference a real flow.

    The run itself loads from the local store: a MongoDB outage costs the mirror
    its flow document, never the run.
    """
    from ..activities.mirror import database_from_uri, publish_to_mongo

    try:
        await asyncio.to_thread(publish_to_mongo, program, uri, database_from_uri(uri, None))
    except Exception as exc:  # noqa: BLE001 - the mirror never fails a run
        _err(f"warning: program not stored in the mirror's flows: {exc}")


RUN_ACTIVITY_SLOTS = 500
"""Handler activities each in-process worker of ``ffl run`` takes at once (the SDK's default of 100 would cap a
foreach of slow handlers at 100 wide)."""

SHUTDOWN_GRACE = 2.0
"""Seconds a handler still running when ``ffl run`` ends (Ctrl-C) may take before it is cancelled."""


class Interrupted(Exception):
    """Ctrl-C (or SIGTERM) arrived while ``ffl run`` was setting up."""


def _stop_on_signals(stop: asyncio.Event) -> None:
    """SIGINT/SIGTERM set ``stop`` (the run decides what to do); a second Ctrl-C leaves at once."""
    loop = asyncio.get_running_loop()

    def first() -> None:
        if stop.is_set():
            _err("ffl: interrupted again: leaving without waiting")
            sys.stdout.flush()
            os._exit(130)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, first)


async def _unless_stopped(work, stop: asyncio.Event):
    """Await ``work`` unless ``stop`` is set first (then Interrupted; ``work`` is left to finish)."""
    if stop.is_set():
        work.close()
        raise Interrupted
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    if task.done():
        return task.result()
    task.add_done_callback(_consume)
    raise Interrupted


def _consume(task: asyncio.Future) -> None:
    """Mark a background task's outcome as seen, so asyncio never reports it at exit."""
    if not task.cancelled():
        task.exception()


async def _run_async(args: argparse.Namespace, program: Program, inputs: dict, registry: HandlerRegistry) -> int:
    from temporalio.client import WorkflowFailureError

    config = load_config(args.config)
    stop = asyncio.Event()
    _stop_on_signals(stop)
    interrupted_status = 130
    async with contextlib.AsyncExitStack() as stack:
        try:
            env = await _unless_stopped(_services(args, stack), stop)
        except Interrupted:
            _err("ffl: interrupted before the run started")
            return interrupted_status
        digest = env.store.publish(program)
        if env.mirror:
            await _publish_to_mirror(program, env.mirror)
        try:
            client = await _unless_stopped(connect(env.options, retry_for=30.0 if env.embedded else 0.0,
                                                   mongo_uri=env.mirror), stop)
            config = await with_search_attributes(client, env.options.namespace, config, _err)
        except Interrupted:
            _err("ffl: interrupted before the run started")
            return interrupted_status
        suffix = uuid.uuid4().hex[:8]
        queue, config = private_queues(args.task_queue, env.embedded, suffix, program, args.workflow, config,
                                       registry)
        facets = event_facets(program, args.workflow, config)
        missing = [name for name in facets if name not in registry]
        # On a shared server, queues we hold no handler for are left to the workers already serving them;
        # on our own embedded server nobody else can, so serve them too and fail those steps clearly.
        served = {q for name, q in facets.items() if env.embedded or name in registry}
        queues = sorted(served - {queue})
        if missing:  # only on a shared server: on the embedded one _run refused
            _err(f"warning: no handler loaded for {', '.join(missing)} (those steps wait for workers serving "
                 "their queues)")
        mirror = None
        if env.mirror:
            config = config.model_copy(update={"mirror": True})
            mirror = open_mirror(env.mirror, env.store, [queue, *queues], registry.names(), "ffl-run")
            stack.push_async_callback(asyncio.to_thread, mirror.close)
        listeners = [mirror.listener] if mirror else []
        # In-process workers stop with the command: a handler still running after Ctrl-C gets 2 s, not 10.
        # Scripts: the program is the caller's own files; on our embedded server nobody else can start runs,
        # so they are allowed there by default. On a shared server the worker takes --allow-scripts like any other.
        allow_scripts = args.allow_scripts or env.embedded
        workers = [build_worker(client, queue, registry, store=env.store, config=config, interpreter=True,
                                mirror=mirror.writer if mirror else None, listeners=listeners,
                                shutdown_grace=SHUTDOWN_GRACE, allow_scripts=allow_scripts,
                                max_concurrent_activities=RUN_ACTIVITY_SLOTS,
                                local_handlers=local_activities(args, env.embedded))]  # fmt: skip
        workers += [build_worker(client, q, registry, config=config, listeners=listeners,
                                 shutdown_grace=SHUTDOWN_GRACE, max_concurrent_activities=RUN_ACTIVITY_SLOTS)
                    for q in queues]
        tasks = [asyncio.create_task(w.run()) for w in workers]
        for task in tasks:
            task.add_done_callback(_consume)
        stack.push_async_callback(_shutdown, workers, tasks)
        workflow_id = args.workflow_id or f"ffl-{args.workflow}-{suffix}"
        sources = source_files(json.loads(trim_program(program_to_json(program), args.workflow)))
        namespace = program.facets[args.workflow].namespace
        handle = await client.start_workflow(
            args.workflow, inputs, id=workflow_id, task_queue=queue, memo=run_memo(args.workflow, digest, sources),
            static_summary=program_line(args.workflow, digest, sources),
            static_details=program_details(args.workflow, digest, sources, namespace),
            # A worker that restarts replays the whole history in one task: give large runs room.
            task_timeout=timedelta(seconds=60),
        )
        tty = sys.stderr.isatty() and not args.quiet
        console = None
        if tty:
            from rich.console import Console

            console = Console(stderr=True, highlight=False)
            _err(f"workflow {args.workflow}: id {workflow_id}, program {digest[:12]}, queues {queue}"
                 + "".join(f", {q}" for q in queues))  # fmt: skip
        started = time.monotonic()
        status = 0
        try:
            result = await _result_or_stop(client, handle, tasks, stop, console, started)
            try:
                line = dumps_checked(result, ensure_ascii=False)  # never Infinity or NaN; in the order returned
            except ValueProblem as exc:
                status = 1
                _err(f"error: workflow {args.workflow} ({workflow_id}) returned a result that is not JSON: {exc}")
            else:
                print(line, flush=True)
        except WorkflowFailureError as exc:
            status = 1
            _err(f"error: workflow {args.workflow} ({workflow_id}) failed")
            for line in describe_failure(exc):
                _err(f"  {line}")
        except Interrupted:
            _err(await _interrupted(handle, env, queues=[queue, *queues]))
            return interrupted_status
        if config.type_checks == "warn":
            await _print_warnings(handle)
        if args.keep_server:
            await _wait_for_interrupt(env.where(), workflow_id, stop)
        elif env.embedded and sys.stderr.isatty():
            _err("the embedded dev server stops now; add --keep-server to browse this run in the Web UI")
        return status


async def _print_warnings(handle) -> None:
    """Under ``type_checks: warn``: each value the run passed on although it did not fit its type."""
    from temporalio.service import RPCError

    try:
        warnings = await handle.query(WARNINGS_QUERY)
    except RPCError as exc:  # a worker of a release without the query: the worker log has them
        _err(f"warning: the run's type-check warnings cannot be read ({exc}); they are in the worker log")
        return
    for warning in warnings:
        _err(f"warning: {('step ' + repr(warning['path']) + ': ') if warning['path'] else ''}{warning['message']}")


async def _result_or_stop(client, handle, tasks: list[asyncio.Task], stop: asyncio.Event, console,
                          started: float) -> Any:
    """The workflow's result, unless Ctrl-C comes first (Interrupted) or a worker dies (its error)."""
    result = asyncio.ensure_future(handle.result())
    result.add_done_callback(_consume)
    stopper = asyncio.ensure_future(stop.wait())
    progress = None
    if console is not None:
        progress = asyncio.ensure_future(show_progress(client, handle, console, started))
        progress.add_done_callback(_consume)
    try:
        done, _ = await asyncio.wait({result, stopper, *tasks}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        if progress is not None:
            progress.cancel()
            await asyncio.gather(progress, return_exceptions=True)
    if result in done:
        if console is not None:
            await print_final_counts(client, handle, console, started)
        return result.result()
    if stopper in done and stop.is_set():
        result.cancel()
        raise Interrupted
    result.cancel()
    for task in done:
        if task in tasks:
            task.result()  # raises the worker's error
    raise RuntimeError("a worker stopped before the workflow finished")


async def _interrupted(handle, env: _Services, queues: list[str]) -> str:
    """Cancel the run on our own server; on a shared one leave it running. One line says which."""
    if env.embedded:
        try:
            await handle.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(handle.result(), 5.0)  # let the workflow record its cancellation
        except Exception as exc:  # noqa: BLE001 - the server stops anyway
            return f"ffl: interrupted: could not cancel run {handle.id} ({exc}); the embedded server stops now"
        return f"ffl: interrupted: run {handle.id} cancelled; the embedded server stops now"
    options = env.options
    target = f"--address {options.address} --namespace {options.namespace}"
    return (f"ffl: interrupted: run {handle.id} is still running on {options.address} (namespace "
            f"{options.namespace}), waiting for workers on {', '.join(queues)}; cancel it with: "
            f"temporal workflow cancel --workflow-id {handle.id} {target}")


async def _shutdown(workers: list, tasks: list[asyncio.Task]) -> None:
    """Stop the in-process workers (each gives running handlers SHUTDOWN_GRACE seconds).

    A handler running as a local activity holds the interpreter worker's shutdown until it returns; past
    the grace (and a little more) the command stops waiting: it ends the process anyway.
    """
    async def stop() -> None:
        await asyncio.gather(*(w.shutdown() for w in workers), return_exceptions=True)
        await asyncio.gather(*tasks, return_exceptions=True)

    stopping = asyncio.ensure_future(stop())
    stopping.add_done_callback(_consume)
    # asyncio.wait, not wait_for: a worker's shutdown held by a handler that never returns ignores being
    # cancelled, and wait_for would wait for that too.
    await asyncio.wait({stopping}, timeout=SHUTDOWN_GRACE + 3.0)


def _run_and_leave(main: Coroutine[Any, Any, int]) -> int:
    """Run ``main`` on a new event loop and return as soon as it does.

    Not ``asyncio.run``: that cancels and awaits every task still pending, and a worker left running by a
    handler that never returns (after Ctrl-C, past the grace) would hold the exit for its retries against a
    server already stopped. ``main`` has closed what must be closed; the process ends with ``os._exit``.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    return loop.run_until_complete(main)


async def _wait_for_interrupt(where: str, workflow_id: str, stop: asyncio.Event) -> None:
    _err(f"workers and server stay up ({where}, workflow {workflow_id}); press Ctrl-C to stop")
    stop.clear()
    await stop.wait()


def _run(args: argparse.Namespace) -> int:
    if not args.workflow:
        _err("error: say which workflow to run: --type NAME (or --workflow NAME), e.g. --type calc.Double")
        return 2
    program = _compile(args.files)
    if program is None:
        return 1
    from ..compiler.graph import GraphError, find_workflow

    try:
        decl = find_workflow(program, args.workflow)  # a qualified or unique short name
    except GraphError as exc:
        _err(f"error: {exc}")
        return 2
    if decl.kind != "workflow":
        _err(f"error: {decl.qname} is not a workflow but a{'n' if decl.kind == 'event' else ''} {decl.kind} facet; workflows: {', '.join(program.workflows) or '(none)'}")
        return 2
    args.workflow = decl.qname
    if len(args.input) > 1:
        _err(f"error: --input given {len(args.input)} times: a workflow takes one JSON object of parameters")
        return 2
    try:
        inputs = _parse_input(args.input[0] if args.input else "{}")
    except ValueProblem as exc:
        _err(f"error: bad --input: {exc} (at most {MAX_JSON_DEPTH} levels, finite numbers)")
        return 2
    except (ValueError, OSError) as exc:
        _err(f"error: bad --input: {exc}")
        return 2
    try:
        registry = load_handlers(args.handlers) if args.handlers else HandlerRegistry()
    except HandlerLoadError as exc:
        _err(f"error: {exc}")
        return 2
    embedded = not (args.address or os.environ.get("TEMPORAL_ADDRESS"))
    if embedded:  # nobody else can serve a facet on our own server: refuse now rather than fail at its step
        try:
            missing = [name for name in event_facets(program, args.workflow, load_config(args.config))
                       if name not in registry]
        except (OSError, ValueError) as exc:
            _err(f"error: bad --config: {exc}")
            return 2
        if missing:
            _err(f"error: no handler loaded for {', '.join(missing)}: on the embedded server nobody else serves "
                 "them (give --handlers PKG_OR_FILE, or --address a server whose workers serve them)")
            return 2
    # The SDK logs every failed activity attempt with a traceback; the run's outcome says enough.
    configure_logging(logging.INFO if args.verbose else logging.ERROR)
    core_logs_to_python_logging()  # stdout carries the result only
    try:
        return _run_and_leave(_run_async(args, program, inputs, registry))
    except ConnectionFailed as exc:
        _err(f"error: {exc}")
        return 1
    except BrokenPipeError:
        raise
    except (OSError, RuntimeError, ValueError) as exc:  # server did not start, bad config, lost server
        _err(f"error: {server_error_line(exc, args.address or os.environ.get('TEMPORAL_ADDRESS') or 'the server')}")
        return 1


# --------------------------------------------------------------------------- registration


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run",
        help="compile and run a workflow to completion (embedded dev server unless --address)",
        description="Compile FILEs, publish the program, serve it with in-process workers and run one workflow. "
        "The returns are printed to stdout as JSON.",
    )
    run.add_argument("files", nargs="+", metavar="FILE", help=".ffl files or directories")
    run.add_argument("--type", "--workflow", dest="workflow", metavar="WORKFLOW",
                     help="the workflow to run (its Temporal workflow type), e.g. calc.Double; required")
    run.add_argument("-w", dest="workflow", help=argparse.SUPPRESS)  # the old spelling; temporal's -w is the id
    run.add_argument("--input", "-i", action="append", default=[], help="parameters as one JSON object, or "
                     "@file.json (default {})")
    run.add_argument("--handlers", action="append", default=[], metavar="PKG_OR_FILE",
                     help="handler module/package, .py file or directory (repeatable)")  # fmt: skip
    run.add_argument("--registry", help="program registry directory (default: a temporary one with the "
                     "embedded server, else $FFL_REGISTRY or ~/.ffl/registry)")  # fmt: skip
    run.add_argument("--config", help="runtime configuration: a JSON file, or the JSON itself (retry, facet_retry, queues, mirror, type_checks)")
    run.add_argument("--task-queue", help="interpreter task queue (default: ffl on the embedded server; with "
                     "--address a queue of this run's own, ffl-run-<id>, and <queue>-run-<id> for its handlers)")
    run.add_argument("--workflow-id", help="the run's workflow id (default ffl-<workflow>-<random>)")
    run.add_argument("--keep-server", action="store_true", help="after the run, keep server and workers up "
                     "(browse the Web UI) until Ctrl-C")  # fmt: skip
    run.add_argument("--no-ui", action="store_true", help="embedded server without the Web UI (handlers then run "
                     "as local activities, without a server round trip per step)")
    run.add_argument("--local-activities", action="store_true", help="run handlers as local activities on the "
                     "embedded server even with the Web UI up: faster, but the UI shows each step as a marker, "
                     "without its own timing, summary or retries")
    run.add_argument("--mongo", help="mirror runners, steps and logs to this MongoDB (env MONGODB_URI)")
    run.add_argument("--local-mongo", action="store_true",
                     help="start a local secantusdb for the mirror (development; needs the secantusdb package)")
    run.add_argument("--allow-scripts", action="store_true", help="run FFL scripts with --address too (always on "
                     "with the embedded server); each in its own process with time and memory limits")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress display")
    run.add_argument("--verbose", "-v", action="store_true", help="log workers' activity (retries, failures)")
    add_connection_args(run, address_help="use this Temporal server instead of an embedded one (env TEMPORAL_ADDRESS)")
    run.set_defaults(func=_run)

    publish = subparsers.add_parser("publish", help="compile and store a program where interpreter workers load it")
    publish.add_argument("files", nargs="+", metavar="FILE", help=".ffl files or directories")
    publish.add_argument("--registry", help="program registry directory (env FFL_REGISTRY, default ~/.ffl/registry)")
    publish.add_argument("--mongo", metavar="URI", help="publish to MongoDB (flows, workflows) instead of the "
                         "registry, or as well when --registry is given (env MONGODB_URI)")  # fmt: skip
    publish.add_argument("--database", help="MongoDB database (default: the URI's, else 'facetwork')")
    publish.add_argument("--replace", action="store_true", help="point workflows that are already published "
                         "with another program at this one (without it, that is an error naming the program)")
    publish.set_defaults(func=_publish)

    worker = subparsers.add_parser("worker", help="serve one task queue (same as python worker.py)")
    add_worker_args(worker)
    worker.set_defaults(func=run_worker)
