"""What a run continued as new carries, and its memo of completed work: plain data (continuation.py uses it)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Continuation:
    """What a run continued as new carries over (its second workflow argument)."""

    memo: dict[str, Any] = field(default_factory=dict)
    seq: int = 0
    run_id: str = ""
    program_hash: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    runs: int = 1
    """Runs of this logical run so far, this one included."""
    signals: dict[str, Any] | None = None
    """The run's signals (Signals.carry): payloads kept for a later wait, the received log."""
    previous_run: str = ""
    """The run that continued as new with it: the next run checks it is Temporal's ``continued_run_id`` (trust.py)."""
    earlier: dict[str, int] | None = None
    """Step counts of what earlier runs completed and the next run restores without recording it again."""
    snapshot: dict[str, Any] | None = None
    """The units completed so far (semantics/snapshot.py, ``Snapshot.carried``); None before SNAPSHOT."""
    recovered_children: dict[str, list[str]] = field(default_factory=dict)
    """A resumed run's children to recover, by chunk key: [workflow id, run id] of the closed child whose completed
    iterations the new child keeps (resume.py); filled by the workflow itself, never by a client."""
    again: list[str] = field(default_factory=list)
    """A resumed run's paths to run again (``--from`` and the dependents found so far, resume.py), sorted."""
    moved_from: str = ""
    """The program hash the run was moved from (``ffl migrate``): the next run names it in its memo."""


class Memo:
    """Completed results by key: ``restored`` from earlier runs of this logical run, ``fresh`` from this one."""

    def __init__(self, restored: dict[str, Any] | None = None):
        self.restored: dict[str, Any] = dict(restored or {})
        self.fresh: dict[str, Any] = {}

    def get(self, key: str) -> Any | None:
        found = self.restored.get(key)
        return found if found is not None else self.fresh.get(key)

    def put(self, key: str, entry: Any) -> None:
        self.fresh[key] = entry

    def carried(self) -> dict[str, Any]:
        return {**self.restored, **self.fresh}


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=repr)
"""The digest's JSON, one encoder for every call (``json.dumps`` with options builds one per call)."""


def call_digest(facet: str, args: Any) -> str:
    """What a step was called with, in 16 hex digits: a memo entry is honoured only for the same facet and
    arguments (a resumed run whose earlier steps ran again, or a run moved to another program)."""
    text = _CANONICAL.encode([facet, args])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def result_entry(result: Any, digest: str = "") -> dict[str, Any]:
    return {"r": result, "a": digest} if digest else {"r": result}


def failure_entry(message: str, error_type: str, digest: str = "") -> dict[str, Any]:
    return {"e": [message, error_type], "a": digest} if digest else {"e": [message, error_type]}




def is_chunk(entry: Any) -> bool:
    """Whether a memo entry is a child's result (a ChunkResult, or its JSON form once carried)."""
    return not (isinstance(entry, dict) and ("r" in entry or "e" in entry))


def chunk_failed(entry: Any) -> bool:
    failure = entry.get("failure") if isinstance(entry, dict) else getattr(entry, "failure", None)
    return failure is not None


def kept_on_resume(memo: dict[str, Any], again: tuple[str, ...] = (), other_program: bool = False) -> dict[str, Any]:
    """What a resumed run keeps of its predecessor's memo: every completed result, except under ``again``.

    A failed step (or a child whose iterations failed) runs again; so does every step at or under a path
    of ``again`` (``--from``); the memo layer finds their readers (``p`` marks what was kept). Going on with
    another program, an entry without the digest of its call (kept by a release before resume) cannot be
    checked, so it runs again too."""

    def under(key: str) -> bool:
        return any(key == path or key.startswith(path + "/") or in_chunk(key, path) for path in again)

    return {key: ({**entry, "p": 1} if isinstance(entry, dict) else entry) for key, entry in memo.items()
            if not under(key) and not (is_chunk(entry) and chunk_failed(entry))
            and not (isinstance(entry, dict) and "e" in entry)
            and not (other_program and not (entry.get("digest") if is_chunk(entry) else entry.get("a")))}


def in_chunk(key: str, path: str) -> bool:
    """Whether ``path`` lies in the iterations of chunk ``key`` (``<foreach>/foreach[<first>-<last>]``)."""
    head, sep, tail = key.rpartition("/foreach[")
    if not sep or not tail.endswith("]") or not path.startswith(head + "/foreach["):
        return False
    bounds = tail[:-1].split("-")
    index = path[len(head) + len("/foreach["):].split("]", 1)[0]
    if len(bounds) != 2 or not index.isdigit() or not all(b.isdigit() for b in bounds):
        return False
    return int(bounds[0]) <= int(index) <= int(bounds[1])


def reads_again(path: str, refs: list[str], again: set[str]) -> bool:
    """Whether the step at ``path``, reading the steps ``refs``, reads one that runs again (or one holding it):
    each ref is looked for in every scope enclosing the step."""
    if not again or not refs:
        return False
    scope = path.rpartition("/")[0]
    scopes = [scope]
    while scope:
        scope = scope.rpartition("/")[0]
        scopes.append(scope)
    for ref in refs:
        for enclosing in scopes:
            candidate = f"{enclosing}/{ref}" if enclosing else ref
            if any(done == candidate or done.startswith(candidate + "/") for done in again):
                return True
    return False
