"""What a run accepts from whoever started it: the workflow's own trust boundary, decided on values.

Anyone who can start a workflow in the namespace chooses its arguments. The
first is input, checked like any input (boundaries.decode_inputs). The
second, a ``Continuation``, carries state the run would otherwise believe
blindly: completed results (a memo entry is a step done without its
handler), the mirror's sequence and the run's configuration (queues,
retries). So it is honoured only when Temporal itself says this run was
continued as new by the run the continuation names: ``continued_run_id`` is
set (no start request can set it) and is the continuation's
``previous_run`` — an id that did not exist when a starter chose the
arguments, so a retry or a cron run of a forged start cannot match it. A
continuation written before ``previous_run`` existed is bound instead to
Temporal's ``first_execution_run_id``, equally fresh. Anything else is
refused: the run fails at once, saying why.

A child (``ffl.Iterations``) runs outer steps' results and a configuration it
is given: it is accepted only with a parent whose workflow id is inside the
logical run the request names, and (since this release) whose run id the
request records. Only workflow code starts a child, so a client must run a
worker of its own to get that far, and a client that can run workers in the
namespace can already answer any task; that is locked down by Temporal's
authorization, not here (docs/reliability.md).

The memo is the starter's too: the program hash it pins is checked
(``pinned_hash``), and the keys the run describes itself in are read so that
whatever a starter put there is overwritten, never decoded into a failure.

A resumed run (resume.py) takes nothing of the kind from its starter: its memo names a closed run of its
own workflow id, and the run reads that run's results from Temporal itself.

Every refusal is a non-retryable ApplicationError raised from the workflow:
the run fails, its workflow task never retries forever.

The checks here take what trust.py read of the run (its info, the decoded
arguments) as values, so they are tested without a server.
"""

from __future__ import annotations

from typing import Any

from temporalio.exceptions import ApplicationError

from interpreter.program.constants import CHUNK_WORKFLOW

from .memo import Continuation


def refused(message: str, error_type: str = "InvalidContinuation") -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


def check_second_argument(count: int, continued_run_id: str | None) -> None:
    """A second argument is a continuation, which only a run continued as new by Temporal may have."""
    if not continued_run_id:
        raise refused(f"a workflow takes one input, a JSON object of parameters; this run was started with "
                      f"{count} (one --input each), not continued: a second argument is a continuation, which "
                      "only the interpreter passes when it continues a run as new", "InvalidParameters")


def check_shape(carried: Continuation) -> None:
    """The types a Continuation's fields must have (the converter does not check them)."""
    wrong = [name for name, ok in (
        ("memo", isinstance(carried.memo, dict)), ("seq", isinstance(carried.seq, int)),
        ("run_id", isinstance(carried.run_id, str)), ("program_hash", isinstance(carried.program_hash, str)),
        ("config", isinstance(carried.config, dict)), ("runs", isinstance(carried.runs, int)),
        ("signals", carried.signals is None or isinstance(carried.signals, dict)),
        ("previous_run", isinstance(carried.previous_run, str)),
        ("snapshot", carried.snapshot is None or isinstance(carried.snapshot, dict)),
        ("earlier", carried.earlier is None or isinstance(carried.earlier, dict)),
        ("recovered_children", isinstance(carried.recovered_children, dict)),
        ("again", isinstance(carried.again, list) and all(isinstance(path, str) for path in carried.again)),
    ) if not ok]  # fmt: skip
    if wrong:
        raise refused(f"the continuation's {', '.join(wrong)} have the wrong type")


def check_continued(carried: Continuation, continued_run_id: str, first_execution_run_id: str,
                    root: bool = True) -> None:
    """A continuation of the right shape, carried by the run Temporal says this one continues.

    ``root`` is False for a child, whose first run id is its own, not its logical run's."""
    check_shape(carried)
    if carried.previous_run:
        if carried.previous_run != continued_run_id:
            raise refused(f"the continuation was carried from run {carried.previous_run[:40]!r}, but this run was "
                          f"continued from {continued_run_id}")
    elif root and carried.run_id != first_execution_run_id:  # written by a release before previous_run
        raise refused(f"the continuation belongs to run {carried.run_id[:40]!r}, not to this run's chain "
                      f"(first run {first_execution_run_id})")


def check_parent(request: Any, parent: tuple[str, str] | None) -> None:
    """A child's request is accepted only from a parent (workflow id, run id) inside the logical run it names."""
    root_id: Any = getattr(request, "root_id", None)
    if parent is None:
        raise refused(f"{CHUNK_WORKFLOW} runs part of a foreach for the interpreter, as a child of its run; "
                      "it cannot be started on its own", "UntrustedChild")
    parent_id, parent_run_id = parent
    if not isinstance(root_id, str) or (parent_id != root_id and not parent_id.startswith(root_id + "/")):
        raise refused(f"{CHUNK_WORKFLOW} started by {parent_id} for run {str(root_id)[:80]!r}: a child "
                      "belongs to the run that starts it", "UntrustedChild")
    parent_run = getattr(request, "parent_run", "")
    if parent_run and parent_run != parent_run_id:
        raise refused(f"{CHUNK_WORKFLOW} was requested by run {str(parent_run)[:40]!r}, but started by "
                      f"{parent_run_id}", "UntrustedChild")
