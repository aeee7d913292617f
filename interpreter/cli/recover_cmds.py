"""``ffl resume``: a failed, cancelled, terminated or timed-out run goes on where it stopped.

``ffl resume WORKFLOW_ID [--run-id RUN] [--from PATH]... [--wait]`` starts a
new run under the same workflow id (interpreter.operations.resume): every step
that completed keeps its result without calling its handler again; the steps
that failed, were cancelled or never ran run, and so does every step at or
under a ``--from`` path. Prints one line naming the new run (with ``--wait``,
then its returns as ``ffl run`` does) and exits 0; 1 with the reason when
nothing was started (a completed or running run, no such run) or the resumed
run failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

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


def resume_cmd(args: argparse.Namespace) -> int:
    from temporalio.client import WorkflowFailureError

    from ..operations import RecoveryError, resume

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
        started = await resume(client, workflow_id, run_id=args.run_id, again=args.again)
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
    cmd.add_argument("--wait", action="store_true", help="wait for the resumed run and print its returns")
    add_connection_args(cmd)
    cmd.set_defaults(func=resume_cmd)
