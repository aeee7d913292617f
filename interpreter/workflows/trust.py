"""What a run accepts from whoever started it, read from Temporal: its arguments, its info, its memo.

trust_checks.py says why and decides on the values read here; a refusal is
a non-retryable ApplicationError raised from the workflow, so the run fails
at once and its workflow task never retries forever.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.common import RawValue

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import CHUNK_WORKFLOW, MEMO_PROGRAM_HASH

from .features import Level
from .memo import Continuation
from .trust_checks import check_continued, check_parent, check_second_argument, refused

T = TypeVar("T")


def _decoded(arg: RawValue, kind: type[T], what: str, error_type: str) -> T:
    try:
        value = workflow.payload_converter().from_payload(arg.payload, kind)
    except Exception as err:  # any shape: the converter raises TypeError, KeyError, ValueError ...
        raise refused(f"{what} is not a {kind.__name__}: {type(err).__name__}: {err}"[:2000], error_type) from None
    if not isinstance(value, kind):
        raise refused(f"{what} is not a {kind.__name__}, got {type(value).__name__}", error_type)
    return value


def continuation(args: Sequence[RawValue], root: bool = True) -> Continuation | None:
    """The run's second argument when the interpreter itself continued this run as new; None when absent.

    ``root`` is False for a child, whose first run id is its own, not its logical run's."""
    if len(args) < 2:
        return None
    info = workflow.info()
    check_second_argument(len(args), info.continued_run_id)
    carried = _decoded(args[1], Continuation, "the workflow's second argument", "InvalidContinuation")
    check_continued(carried, info.continued_run_id or "", info.first_execution_run_id, root)
    return carried


def chunk_request(args: Sequence[RawValue], kind: type[T]) -> T:
    """A child's request, accepted only from a parent inside the logical run it names."""
    if not args:
        raise refused(f"{CHUNK_WORKFLOW} needs a chunk request", "InvalidParameters")
    request = _decoded(args[0], kind, f"the input of {CHUNK_WORKFLOW}", "InvalidParameters")
    parent = workflow.info().parent
    check_parent(request, (parent.workflow_id, parent.run_id) if parent is not None else None)
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
