"""``ffl resume`` and ``ffl migrate``: recover a pipeline, or move running runs onto a corrected program.

``ffl resume WORKFLOW_ID [--run-id RUN] [--from PATH]... [--program FILES_OR_HASH] [--dry-run] [--wait]``
starts a new run under the same workflow id (interpreter.operations.resume):
every step that completed keeps its result without calling its handler again;
the steps that failed, were cancelled or never ran run, and so does every step
at or under a ``--from`` path, and every step reading one that runs again.
With ``--program`` (FFL files, compiled and published to the registry, or the
hash of a published program) the run goes on with that program; the
compatibility report (interpreter/compatibility.py) is printed first, and with
``--dry-run`` only the report. Prints one line naming the new run (with
``--wait``, then its returns as ``ffl run`` does) and exits 0; 1 with the
reason when nothing was started (a completed or running run, no such run, a
program that does not compile) or the resumed run failed.

``ffl migrate WORKFLOW_ID... --program FILES_OR_HASH [--all-of WORKFLOW] [--dry-run]`` checks each running
run against the program and asks each compatible one to move at its next safe point
(interpreter.operations.migrate); one line per run, and the report of each run left as it is. Exit 0 when
every run moved (or, with ``--dry-run``, could), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from .connect import (
    add_connection_args,
    connect,
    core_logs_to_python_logging,
    options_from_args,
    server_error_line,
)
from .flags import FlagError, add_either, either


def _err(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


HASH = re.compile(r"[0-9a-f]{12,64}")


def chosen_program(values: list[str], workflow: str, store) -> tuple[object, str]:
    """(Program, hash) of ``--program``: a published program's hash, or FFL files compiled and published."""
    from ..compiler import CompileError, compile_files_result
    from ..operations import RecoveryError
    from ..program.serialize import program_from_json

    if len(values) == 1 and HASH.fullmatch(values[0]) and not Path(values[0]).exists():
        try:
            text, digest = store.load(workflow, values[0])
        except LookupError as err:
            raise RecoveryError(f"--program {values[0]}: {err}") from None
        return program_from_json(text), digest
    missing = [value for value in values if not Path(value).exists()]
    if missing:
        raise RecoveryError(f"--program: no such file {missing[0]} (nor a published program's hash)")
    result = compile_files_result(values)
    try:
        program = result.program_or_raise()
    except CompileError as err:
        raise RecoveryError("--program does not compile:\n" + "\n".join(str(d) for d in err.diagnostics)) from None
    return program, store.publish(program)


def _run(command: str, main: Callable[[], Coroutine[Any, Any, int]], address: str) -> int:
    """Run a command's ``main``; its exit status, or 1 with the failure in one line (never a traceback)."""
    from ..operations import RecoveryError

    try:
        return asyncio.run(main())
    except RecoveryError as err:
        _err(f"ffl {command}: {err}")
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 - one line, never a traceback
        _err(f"ffl {command}: {server_error_line(err, address)}")
    return 1


def _store(args: argparse.Namespace):
    """The program registry ``--program`` publishes to and loads from (``--registry``/``--mongo`` or their env)."""
    from .worker_main import open_store

    return open_store(args.registry or os.environ.get("FFL_REGISTRY"), args.mongo or os.environ.get("MONGODB_URI"))


def migrate_cmd(args: argparse.Namespace) -> int:
    from ..operations import migrate, open_runs

    if not args.workflow_ids and not args.all_of:
        _err("ffl migrate: name the runs (WORKFLOW_ID...) or --all-of WORKFLOW")
        return 2
    core_logs_to_python_logging()
    options = options_from_args(args)

    async def main() -> int:
        client = await connect(options)
        ids = list(args.workflow_ids)
        if args.all_of:
            ids += [wid for wid in await open_runs(client, args.all_of) if wid not in ids]
            if not ids:
                _err(f"ffl migrate: no running run of {args.all_of}")
                return 1
        workflow = args.all_of or (await client.get_workflow_handle(ids[0]).describe()).workflow_type
        program, program_hash = chosen_program(args.program, workflow, _store(args))
        outcomes = await migrate(client, ids, program, program_hash, dry_run=args.dry_run)
        for outcome in outcomes:
            print(f"{outcome.workflow_id}: {'moves' if outcome.moved else 'not moved'} — {outcome.reason}", flush=True)
            if outcome.report is not None and (outcome.report.conflicts or args.dry_run):
                print("  " + outcome.report.text().replace("\n", "\n  "), flush=True)
        wanted = (lambda m: m.report is not None and not m.report.conflicts) if args.dry_run else (lambda m: m.moved)
        return 0 if all(wanted(m) for m in outcomes) else 1

    return _run("migrate", main, options.address)


def resume_cmd(args: argparse.Namespace) -> int:
    from temporalio.client import WorkflowFailureError

    from ..operations import check, resumable, resume

    try:
        workflow_id = either(args, "workflow_id", "--workflow-id")
    except FlagError as err:
        _err(f"ffl resume: {err}")
        return 2
    assert workflow_id is not None  # required
    core_logs_to_python_logging()
    options = options_from_args(args)

    async def main() -> int:
        client = await connect(options)
        program_hash = ""
        if args.program or args.dry_run:
            description, _ = await resumable(client, workflow_id, args.run_id)
            program = None
            if args.program:
                program, program_hash = chosen_program(args.program, description.workflow_type, _store(args))
            report = await check(client, workflow_id, program, run_id=args.run_id, again=args.again,
                                 program_hash=program_hash)
            print(report.text(), flush=True)
            if args.dry_run:
                return 0
        started = await resume(client, workflow_id, run_id=args.run_id, again=args.again,
                               program_hash=program_hash)
        print(f"resumed {started.workflow_type} {started.workflow_id}: run {started.run_id} goes on from run "
              f"{started.resumed_run} ({started.resumed_state}); its completed steps keep their results",
              flush=True)
        if not args.wait:
            return 0
        try:
            returns = await client.get_workflow_handle(workflow_id, run_id=started.run_id).result()
        except WorkflowFailureError as err:
            cause = getattr(err.cause, "message", None) or str(err.cause or err)
            _err(f"ffl resume: the resumed run failed: {cause}")
            return 1
        print(json.dumps(returns), flush=True)
        return 0

    return _run("resume", main, options.address)


def register(subparsers: argparse._SubParsersAction) -> None:
    cmd = subparsers.add_parser(
        "resume", help="resume a failed, cancelled, terminated or timed-out run where it stopped",
        description="Start a new run under the same workflow id that keeps every completed step's result (its "
        "handler is not called again) and runs the steps that failed, were cancelled or never ran. The new run "
        "reads those results from Temporal itself. A completed or running run is not resumed. "
        "See docs/operations.md.")
    add_either(cmd, "workflow_id", "WORKFLOW_ID", ("--workflow-id", "-w"), "the run")
    cmd.add_argument("--run-id", "-r", help="the run to resume (default: the workflow id's last run)")
    cmd.add_argument("--from", dest="again", action="append", default=[], metavar="PATH",
                     help="also run again the step at PATH (a path of ffl status) and every step under it "
                     "(repeatable)")
    cmd.add_argument("--program", nargs="+", metavar="FILE_OR_HASH",
                     help="go on with this program: FFL files (compiled, published to the registry) or the hash "
                     "of a published program; the compatibility report is printed first")
    cmd.add_argument("--dry-run", action="store_true", help="print the compatibility report only: start nothing")
    cmd.add_argument("--registry", help="program registry directory for --program (env FFL_REGISTRY, default "
                     "~/.ffl/registry); the workers must load programs from it")
    cmd.add_argument("--mongo", help="MongoDB URI of the program registry instead (env MONGODB_URI)")
    cmd.add_argument("--wait", action="store_true", help="wait for the resumed run and print its returns")
    add_connection_args(cmd)
    cmd.set_defaults(func=resume_cmd)

    move = subparsers.add_parser(
        "migrate", help="move running runs onto a corrected program at their next safe point, checked first",
        description="Check each running run against the program (its completed steps must keep their results, "
        "its calls in flight must be the same calls in the new program) and ask each compatible one to move: it "
        "holds, lets what is in flight finish (no handler is called twice), then continues as new with the new "
        "program and its results. A run that is not compatible is left untouched; its report says why. "
        "See docs/operations.md.")
    move.add_argument("workflow_ids", nargs="*", metavar="WORKFLOW_ID", help="the runs to move")
    move.add_argument("--all-of", metavar="WORKFLOW", help="every running run of this FFL workflow (its qualified "
                      "name, the Temporal workflow type)")
    move.add_argument("--program", nargs="+", metavar="FILE_OR_HASH", required=True,
                      help="the corrected program: FFL files (compiled, published to the registry) or a hash")
    move.add_argument("--dry-run", action="store_true", help="check and report only: move nothing")
    move.add_argument("--registry", help="program registry directory (env FFL_REGISTRY, default ~/.ffl/registry)")
    move.add_argument("--mongo", help="MongoDB URI of the program registry instead (env MONGODB_URI)")
    add_connection_args(move)
    move.set_defaults(func=migrate_cmd)
