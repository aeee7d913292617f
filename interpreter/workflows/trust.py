"""What a run accepts from whoever started it: the workflow's own trust boundary.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import CHUNK_WORKFLOW, MEMO_PROGRAM_HASH

from .features import Level
from .memo import Continuation

T = TypeVar("T")

def refused(message: str, error_type: str = "InvalidContinuation") -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=True)


def _decoded(arg: RawValue, kind: type[T], what: str, error_type: str) -> T:
    try:
        value = workflow.payload_converter().from_payload(arg.payload, kind)
    except Exception as err:  # any shape: the converter raises TypeError, KeyError, ValueError ...
        raise refused(f"{what} is not a {kind.__name__}: {type(err).__name__}: {err}"[:2000], error_type) from None
    if not isinstance(value, kind):
        raise refused(f"{what} is not a {kind.__name__}, got {type(value).__name__}", error_type)
    return value


def _check_shape(carried: Continuation) -> None:
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


def continuation(args: Sequence[RawValue], root: bool = True) -> Continuation | None:
    """The run's second argument when the interpreter itself continued this run as new; None when absent.

    ``root`` is False for a child, whose first run id is its own, not its logical run's."""
    if len(args) < 2:
        return None
    info = workflow.info()
    if not info.continued_run_id:
        raise refused(f"a workflow takes one input, a JSON object of parameters; this run was started with "
                      f"{len(args)} (one --input each), not continued: a second argument is a continuation, which "
                      "only the interpreter passes when it continues a run as new", "InvalidParameters")
    carried = _decoded(args[1], Continuation, "the workflow's second argument", "InvalidContinuation")
    _check_shape(carried)
    if carried.previous_run:
        if carried.previous_run != info.continued_run_id:
            raise refused(f"the continuation was carried from run {carried.previous_run[:40]!r}, but this run was "
                          f"continued from {info.continued_run_id}")
    elif root and carried.run_id != info.first_execution_run_id:  # written by a release before previous_run
        raise refused(f"the continuation belongs to run {carried.run_id[:40]!r}, not to this run's chain "
                      f"(first run {info.first_execution_run_id})")
    return carried


def chunk_request(args: Sequence[RawValue], kind: type[T]) -> T:
    """A child's request, accepted only from a parent inside the logical run it names."""
    if not args:
        raise refused(f"{CHUNK_WORKFLOW} needs a chunk request", "InvalidParameters")
    request = _decoded(args[0], kind, f"the input of {CHUNK_WORKFLOW}", "InvalidParameters")
    parent = workflow.info().parent
    root_id: Any = getattr(request, "root_id", None)
    if parent is None:
        raise refused(f"{CHUNK_WORKFLOW} runs part of a foreach for the interpreter, as a child of its run; "
                      "it cannot be started on its own", "UntrustedChild")
    if not isinstance(root_id, str) or (parent.workflow_id != root_id
                                        and not parent.workflow_id.startswith(root_id + "/")):
        raise refused(f"{CHUNK_WORKFLOW} started by {parent.workflow_id} for run {str(root_id)[:80]!r}: a child "
                      "belongs to the run that starts it", "UntrustedChild")
    parent_run = getattr(request, "parent_run", "")
    if parent_run and parent_run != parent.run_id:
        raise refused(f"{CHUNK_WORKFLOW} was requested by run {str(parent_run)[:40]!r}, but started by "
                      f"{parent.run_id}", "UntrustedChild")
    return request


def memo_value(key: str) -> Any:
    """A memo value the starter set, None when absent or undecodable (the run then writes its own over it)."""
    try:
        return workflow.memo_value(key, None)
    except Exception:  # an unknown encoding (KeyError), bad JSON ...
        return None


def pinned_hash() -> str | None:
    """The program hash a starter pinned in the memo: the one per-run choice a start request makes."""
    try:
        pinned = workflow.memo_value(MEMO_PROGRAM_HASH, None)
    except Exception as err:
        raise refused(f"memo '{MEMO_PROGRAM_HASH}' cannot be decoded: {type(err).__name__}: {err}"[:2000],
                      "InvalidParameters") from None
    if pinned is not None and not isinstance(pinned, str):
        raise refused(f"memo '{MEMO_PROGRAM_HASH}' must be a program hash (a string), got {type(pinned).__name__}",
                      "InvalidParameters")
    return pinned


def child_id(root_id: str, root_run: str, key: str, level: Level) -> str:
    """A child's workflow id: unique per logical run (its first run id) since Level.CHILD_RUN_IDS, so a run
    started again under the same workflow id never collides with children of a terminated run still closing."""
    if level >= Level.CHILD_RUN_IDS:
        return f"{root_id}/{root_run}/{key}"
    return f"{root_id}/{key}"
