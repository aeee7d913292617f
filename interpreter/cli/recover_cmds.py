"""``ffl resume``: a failed, cancelled, terminated or timed-out run goes on where it stopped.

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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from pathlib import Path

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


def resume_cmd(args: argparse.Namespace) -> int:
    from temporalio.client import WorkflowFailureError

    from ..operations import RecoveryError, check, resumable, resume
    from .worker_main import open_store

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
                store = open_store(args.registry or os.environ.get("FFL_REGISTRY"),
                                   args.mongo or os.environ.get("MONGODB_URI"))
                program, program_hash = chosen_program(args.program, description.workflow_type, store)
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

    try:
        return asyncio.run(main())
    except RecoveryError as err:
        _err(f"ffl resume: {err}")
    except KeyboardInterrupt:
        return 130
    except Exception as err:  # noqa: BLE001 - one line, never a traceback
        _err(f"ffl resume: {server_error_line(err, options.address)}")
    return 1


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
