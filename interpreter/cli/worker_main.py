"""Temporal workers for FFL: the interpreter queue and handler queues.

``worker.py`` (repo root) and ``ffl worker`` are thin shims over :func:`main`;
``ffl run`` builds the same workers in-process with :func:`build_worker`.
The interpreter queue (``ffl``) runs the FFL workflow and its own activities
(program loading, scripts, mirror) and may serve handlers too; any other queue
serves the handlers whose facets map to it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

from ..activities.dispatch import build_handler_activity, handler_worker_options
from ..activities.handlers import HandlerLoadError, HandlerRegistry, load_handlers
from ..activities.interpreter_side import store_name
from ..activities.listeners import TaskListener
from ..activities.run_header import worker_interceptors
from ..program.config import RuntimeConfig
from ..program.constants import INTERPRETER_QUEUE
from .connect import (
    ConnectOptions,
    add_connection_args,
    connect,
    core_logs_to_python_logging,
    options_from_args,
    server_error_line,
)
from .logs import RunLog, configure_logging
from .search_attrs import with_search_attributes
from .worker_slots import MIN_WORKFLOW_SLOTS, SDK_DEFAULT_SLOTS, slot_options

log = logging.getLogger("ffl.worker")


def load_config(path: str | None) -> RuntimeConfig:
    """RuntimeConfig from a JSON file (retry, facet_retry, queues, mirror, type_checks), or the JSON itself
    (``--config '{"type_checks": "warn"}'``); defaults without one."""
    if not path:
        return RuntimeConfig()
    text = path if path.lstrip().startswith("{") else Path(path).read_text(encoding="utf-8")
    return RuntimeConfig.model_validate_json(text)


def open_store(registry_dir: str | None, mongo_uri: str | None):
    """Where the interpreter loads programs: an explicit registry directory, else MongoDB, else ~/.ffl/registry."""
    from ..activities.program_store import LocalProgramStore

    if registry_dir:
        return LocalProgramStore(registry_dir)
    if mongo_uri:
        from ..activities.mirror import MongoProgramStore

        return MongoProgramStore(mongo_uri)
    return LocalProgramStore()


def open_mirror(mongo_uri: str, store, queues: Sequence[str], handlers: Sequence[str], service: str):
    """The mirror session of a worker process: Mirror activity sink, task listener, server registration."""
    from ..activities.mirror import MirrorSession

    return MirrorSession(mongo_uri, program_store=store, queues=queues, handlers=handlers, service=service).start()


def worker_identity(queue: str, interpreter: bool) -> str:
    """The worker's identity as Temporal shows it: its role, host and process (``handlers[osm]@host/1234``)."""
    role = "interpreter" if interpreter else f"handlers[{queue}]"
    return f"{role}@{socket.gethostname()}/{os.getpid()}"


def build_worker(
    client,
    queue: str,
    registry: HandlerRegistry,
    *,
    store=None,
    config: RuntimeConfig | None = None,
    listeners: Sequence[TaskListener] = (),
    mirror: object | None = None,
    shutdown_grace: float = 10.0,
    interpreter: bool | None = None,
    allow_scripts: bool = False,
    max_concurrent_activities: int | None = None,
    local_handlers: bool = True,
    max_concurrent_workflow_tasks: int | None = None,
):
    """A Worker for ``queue``: handlers always; as interpreter also the workflow and its activities.

    ``interpreter`` defaults to ``queue == "ffl"``. Registrations' ``timeout_ms``
    become the facets' start-to-close timeouts in the runs this interpreter
    loads (pinned with the program), and are enforced by the handler activity
    itself, unless ``config.facet_retry`` sets a facet's timeout.
    FFL scripts run only with ``allow_scripts``. An interpreter that serves
    handlers itself runs them as local activities unless ``local_handlers``
    is false (pinned as ``local_facets``; ``config.remote_facets`` opts facets
    out): every interpreter worker of a deployment must then load the same
    handlers, and a worker shutting down waits for its local activities.
    ``max_concurrent_activities`` is the SDK's slot count (100 unless given); workflow tasks are taken as the
    machine allows unless ``max_concurrent_workflow_tasks`` fixes their number (worker_slots.py).
    """
    from temporalio.worker import Worker

    config = config or RuntimeConfig()
    limits = {f: s for f, s in registry.timeouts().items() if not config.sets_start_to_close(f)}
    activities = [build_handler_activity(registry, queue, listeners, timeouts=limits)]
    workflows: list = []
    runner = {}
    if interpreter is None:
        interpreter = queue == INTERPRETER_QUEUE
    identity = worker_identity(queue, interpreter)
    if interpreter:
        from ..activities.interpreter_side import build_interpreter_activities
        from ..workflows import FFLWorkflow, workflow_runner

        if store is None:
            raise ValueError(f"the {INTERPRETER_QUEUE} queue needs a program store")
        pinned = config.with_handler_timeouts(registry.timeouts())
        if local_handlers and registry.names() and not pinned.local_facets:
            pinned = pinned.model_copy(update={"local_facets": sorted(registry.names())})
        activities = build_interpreter_activities(store, pinned, mirror, allow_scripts=allow_scripts,
                                                  identity=identity) + activities
        workflows = [FFLWorkflow]
        runner = {"workflow_runner": workflow_runner()}
    return Worker(
        client,
        task_queue=queue,
        identity=identity,
        workflows=workflows,
        interceptors=worker_interceptors(client) + ([RunLog()] if interpreter else []),
        activities=activities,
        activity_executor=ThreadPoolExecutor(max_workers=max(16, max_concurrent_activities or SDK_DEFAULT_SLOTS),
                                             thread_name_prefix=f"ffl-act-{queue}"),
        graceful_shutdown_timeout=timedelta(seconds=shutdown_grace),
        **slot_options(max_concurrent_activities, max_concurrent_workflow_tasks),
        **runner,
        **handler_worker_options(),  # heartbeats, and so cancellations, travel within seconds
    )


def add_worker_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--task-queue", "-q", required=True, help=f"queue to serve ('{INTERPRETER_QUEUE}' = interpreter)")
    parser.add_argument("--interpreter", action="store_true",
                        help=f"run the interpreter workflow on this queue even though it is not '{INTERPRETER_QUEUE}'")
    parser.add_argument(
        "--handlers", action="append", default=[], metavar="PKG_OR_FILE",
        help="handler module/package, .py file or directory (repeatable)",
    )  # fmt: skip
    parser.add_argument("--registry", help="program registry directory (env FFL_REGISTRY, default ~/.ffl/registry)")
    parser.add_argument("--mongo", help="MongoDB URI for programs and the mirror (env MONGODB_URI)")
    parser.add_argument("--config", help="runtime configuration: a JSON file, or the JSON itself (retry, facet_retry, queues, mirror, type_checks)")
    parser.add_argument("--max-concurrent-activities", type=int, metavar="N",
                        help="handler activities this worker runs at once (the SDK's default: 100); a foreach runs "
                        "as wide as its workers take it")
    parser.add_argument("--max-concurrent-workflow-tasks", type=_workflow_slots, metavar="N",
                        help=f"workflow tasks this worker runs at once, at least {MIN_WORKFLOW_SLOTS} (default: "
                        f"{MIN_WORKFLOW_SLOTS}, and more while the machine's CPU and memory are below 80 %%)")
    parser.add_argument("--connect-timeout", type=float, default=30.0, help="seconds to retry connecting at start")
    parser.add_argument("--shutdown-grace", type=float, default=10.0, help="seconds running handlers get on shutdown")
    parser.add_argument("--allow-scripts", action="store_true",
                        help="run FFL scripts (interpreter queue only): each in its own process with time and memory "
                        "limits; isolation against accidents, not a sandbox for hostile code")
    add_connection_args(parser)


def _workflow_slots(text: str) -> int:
    """``--max-concurrent-workflow-tasks``: a whole number, at least MIN_WORKFLOW_SLOTS."""
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if number < MIN_WORKFLOW_SLOTS:
        raise argparse.ArgumentTypeError(f"at least {MIN_WORKFLOW_SLOTS} (one slot for each of a worker's two "
                                         f"workflow queues, the sticky one and the shared one), not {number}")
    return number


def _describe(queue: str, registry: HandlerRegistry, config: RuntimeConfig, options: ConnectOptions, store,
              mirror, allow_scripts: bool = False) -> str:  # fmt: skip
    served = registry.names(queue=queue, overrides=config.queues)
    scripts = "allowed" if allow_scripts else "off, see --allow-scripts"
    text = f"ffl worker: queue {queue} on {options.describe()}: "
    if store is not None:
        text += f"interpreter workflow (programs from {store_name(store)}; scripts {scripts}), "
    text += f"handlers {', '.join(served)}" if served else "no handlers"
    if mirror is not None:
        text += f"; mirror to MongoDB {mirror.writer.database}"
    return text


async def serve(args: argparse.Namespace) -> int:
    """Run one worker until SIGINT/SIGTERM, then shut it down gracefully."""
    options = options_from_args(args)
    config = load_config(args.config)
    try:
        registry = load_handlers(args.handlers) if args.handlers else HandlerRegistry()
    except HandlerLoadError as exc:
        print(f"ffl worker: {exc}", file=sys.stderr)
        return 2
    queue = args.task_queue
    interpreter = args.interpreter or queue == INTERPRETER_QUEUE
    mongo_uri = args.mongo or os.environ.get("MONGODB_URI")
    store = None
    if interpreter:
        store = open_store(args.registry or os.environ.get("FFL_REGISTRY"), mongo_uri)
    elif not registry.names(queue=queue, overrides=config.queues):
        print(f"ffl worker: warning: no loaded handler maps to queue {queue} "
              f"(loaded: {', '.join(registry.names()) or 'none'})", file=sys.stderr)  # fmt: skip
    mirror = None
    if mongo_uri:  # a MongoDB URI turns the mirror on for runs this worker loads
        config = config.model_copy(update={"mirror": True})
        mirror = open_mirror(mongo_uri, store, [queue], registry.names(queue=queue, overrides=config.queues),
                             "interpreter" if interpreter else "worker")  # fmt: skip
    try:
        client = await connect(options, retry_for=args.connect_timeout, mongo_uri=mongo_uri)
        if interpreter:  # runs upsert FFL's search attributes only where they are registered
            config = await with_search_attributes(client, options.namespace, config,
                                                  lambda text: print(f"ffl worker: {text}", file=sys.stderr))
        worker = build_worker(
            client, queue, registry, store=store, config=config, shutdown_grace=args.shutdown_grace,
            interpreter=interpreter, mirror=mirror.writer if mirror else None, allow_scripts=args.allow_scripts,
            listeners=[mirror.listener] if mirror else (), max_concurrent_activities=args.max_concurrent_activities,
            max_concurrent_workflow_tasks=args.max_concurrent_workflow_tasks,
        )  # fmt: skip
        return await _serve_until_signal(worker, queue, _describe(queue, registry, config, options, store, mirror,
                                                                        args.allow_scripts))
    finally:
        if mirror is not None:
            await asyncio.to_thread(mirror.close)


async def _serve_until_signal(worker, queue: str, banner: str) -> int:
    """Run ``worker`` until SIGINT/SIGTERM (then shut down gracefully) or until it fails."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    running = asyncio.create_task(worker.run())
    print(banner, file=sys.stderr, flush=True)
    stopped = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({running, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if running in done:  # the worker failed on its own (e.g. lost the server for good)
        stopped.cancel()
        running.result()
        return 1
    print(f"ffl worker: queue {queue}: shutting down", file=sys.stderr, flush=True)
    await worker.shutdown()
    await running
    return 0


def build_parser(prog: str = "worker.py") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Serve one FFL task queue on Temporal.")
    add_worker_args(parser)
    return parser


def run_worker(args: argparse.Namespace) -> int:
    from ..activities.redact import redact_logging, redact_stderr

    redact_stderr()  # a MongoDB URI's credentials never reach the worker's log
    configure_logging(os.environ.get("FFL_LOG_LEVEL", "WARNING").upper())
    redact_logging()
    core_logs_to_python_logging()  # the SDK core's lines in the same format, on stderr
    try:
        return asyncio.run(serve(args))
    except Exception as exc:  # connection refused, bad TLS files, ...
        print(f"ffl worker: {server_error_line(exc, options_from_args(args).address)}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``python worker.py``: ends with a flush and ``os._exit`` (see the design)."""
    status = run_worker(build_parser().parse_args(argv))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
