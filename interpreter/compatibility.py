"""The compatibility report: before a run goes on with another program, which completed results carry over.

The check runs the new program in memory (the language's own interpreter,
semantics/memory.py) with the closed run's inputs, answering each handler
call from the run's completed results by the rules the resumed run itself
applies (workflows/memo.py, workflows/continuation.py): a result carries over
only for the same step path, the same facet and the same arguments evaluated
in the new program, when the step reads no step that runs again. The old
program is run the same way, so each line says why: the facet changed, which
arguments differ, which step it reads, the step failed or never ran, or it is
new; a completed step the new program no longer calls is listed as removed.

A step that runs again is answered here with its old result (or nothing, if
it never completed), so what follows it can still be checked; its readers
run again whatever it returns, so the report holds for them. A step whose
arguments are computed from such a result in other ways (a parameter of a
composed facet, a foreach's element) is checked against the old value: if
the rerun returns something else, it runs again too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .program.display import json_short, step_text
from .program.model import FacetDecl, Program
from .semantics import BuiltinCall, FacetCall, Rules, ScriptCall
from .semantics.memory import MemoryEffects, run_in_memory
from .workflows.memo import call_digest, kept_on_resume, reads_again

KEPT, AGAIN, NEW, REMOVED = "keeps its result", "runs again", "new", "removed"
HEADINGS = {KEPT: ("keeps its result", "keep their results"), AGAIN: ("runs again", "run again"),
            NEW: ("new, runs", "new, run"), REMOVED: ("removed (its result is dropped)", "removed (their results are dropped)")}


@dataclass(frozen=True)
class Line:
    """One step of the report: its path, the step as written, what happens to it and why."""

    path: str
    step: str
    verdict: str
    reason: str = ""


@dataclass
class Report:
    lines: list[Line] = field(default_factory=list)
    stopped: str = ""  # why the check could not follow the new program to its end, if it could not
    conflicts: list[Line] = field(default_factory=list)
    """For a running run (ffl migrate): completed work that would not carry over, calls in flight that the new
    program makes differently or not at all. A run with any is not moved."""

    def of(self, verdict: str) -> list[Line]:
        return [line for line in self.lines if line.verdict == verdict]

    @property
    def again(self) -> list[str]:
        """Paths of every step whose handler will be called (again, or for the first time)."""
        return [line.path for line in self.lines if line.verdict in (AGAIN, NEW)]

    def text(self) -> str:
        """The report as ``ffl resume --dry-run`` prints it, grouped, one step a line."""
        out: list[str] = []
        for verdict in (AGAIN, NEW, REMOVED, KEPT):
            lines = self.of(verdict)
            if not lines:
                continue
            out.append(f"{len(lines)} {'step' if len(lines) == 1 else 'steps'} {HEADINGS[verdict][len(lines) > 1]}:")
            for line in lines[:200] if verdict == KEPT else lines:
                out.append(f"  {line.path}  {line.step}" + (f"  — {line.reason}" if line.reason else ""))
            if verdict == KEPT and len(lines) > 200:
                out.append(f"  … and {len(lines) - 200} more")
        if self.stopped:
            out.append(f"the check stopped early: {self.stopped}")
        if self.conflicts:
            out.append(f"not movable, {len(self.conflicts)} {'conflict' if len(self.conflicts) == 1 else 'conflicts'}:")
            out.extend(f"  {line.path}  {line.step}  — {line.reason}" for line in self.conflicts)
        return "\n".join(out) or "nothing to run"


def placeholder(decl: FacetDecl) -> dict[str, Any]:
    return {ret.name: None for ret in getattr(decl, "returns", []) or []}


class _Answers(MemoryEffects):
    """Handler calls answered from a run's results; each call's facet, arguments and step kept by path."""

    def __init__(self, results: Mapping[str, Any], honour: Any = None):
        super().__init__(handlers={})
        self.results = results
        self.honour = honour
        self.seen: dict[str, tuple[str, dict[str, Any], Any]] = {}

    async def call_facet(self, request: FacetCall) -> Any:
        self.seen[request.path] = (request.decl.qname, request.args, request.step)
        entry = self.results.get(request.path)
        if self.honour is not None:
            self.honour(request)
        if isinstance(entry, dict) and "r" in entry:
            return entry["r"] or {}
        return placeholder(request.decl)

    async def builtin(self, request: BuiltinCall) -> dict[str, Any]:
        """A timer or a wait answered as it was, or as if it had passed: the check never waits."""
        entry = self.results.get(request.path)
        return (entry.get("r") or {}) if isinstance(entry, dict) and "r" in entry else {}

    async def script(self, request: ScriptCall) -> Any:
        """A script's result as it was (the check runs no script), else nothing."""
        entry = self.results.get(request.path)
        return (entry.get("r") or {}) if isinstance(entry, dict) and "r" in entry else {}


def _differences(old: dict[str, Any], new: dict[str, Any]) -> str:
    parts = []
    for name in [*old, *(n for n in new if n not in old)]:
        if name not in new:
            parts.append(f"{name} no longer given")
        elif name not in old:
            parts.append(f"{name} = {json_short(new[name], 40)} added")
        elif call_digest("", old[name]) != call_digest("", new[name]):
            parts.append(f"{name}: {json_short(old[name], 30)} → {json_short(new[name], 30)}")
    return "arguments differ: " + "; ".join(parts) if parts else "arguments differ"


async def compatibility(old_program: Program, new_program: Program, workflow: str, inputs: dict[str, Any],
                        results: Mapping[str, Any], again: tuple[str, ...] = (), *,
                        other_program: bool = True, in_flight: Sequence[str] | None = None) -> Report:
    """Which of ``results`` (a run's completed results by step path, its children's included) the run keeps
    when it goes on with ``new_program``, and what runs — the same decisions the resumed run takes. Given the
    paths of a running run's calls ``in_flight``, its conflicts too (a run is moved only without any)."""
    rules = Rules()
    before = _Answers(results)
    await run_in_memory(old_program, workflow, inputs, before, rules)
    kept = kept_on_resume(dict(results), again, other_program)
    rerun: set[str] = set(again)
    verdicts: dict[str, tuple[str, str]] = {}

    def honour(request: FacetCall) -> None:
        path, qname = request.path, request.decl.qname
        entry = kept.get(path)
        digest = call_digest(qname, request.args)
        original = results.get(path)
        if isinstance(entry, dict) and "r" in entry:
            if entry.get("a", digest) != digest:
                rerun.add(path)
                old = before.seen.get(path)
                reason = (f"facet changed: {old[0]} → {qname}" if old and old[0] != qname
                          else _differences(old[1], request.args) if old else "arguments differ")
                verdicts[path] = (AGAIN, reason)
            elif reads_again(path, request.step.refs, rerun):
                rerun.add(path)
                verdicts[path] = (AGAIN, "reads a step that runs again (" + ", ".join(request.step.refs) + ")")
            else:
                verdicts[path] = (KEPT, "")
            return
        if isinstance(original, dict) and "e" in original:
            verdicts[path] = (AGAIN, f"failed: {original['e'][0][:120]}")
        elif any(path == p or path.startswith(p + "/") for p in again):
            verdicts[path] = (AGAIN, "--from " + next(p for p in again if path == p or path.startswith(p + "/")))
        elif isinstance(original, dict) and "r" in original:
            verdicts[path] = (AGAIN, "its result cannot be checked (kept by a release before resume)")
        elif path in before.seen:
            verdicts[path] = (AGAIN, "never ran")
        else:
            verdicts[path] = (NEW, "")

    after = _Answers(results, honour)
    run = await run_in_memory(new_program, workflow, inputs, after, rules)
    report = Report()
    for path, (_qname, _args, step) in after.seen.items():
        verdict, reason = verdicts[path]
        report.lines.append(Line(path, step_text(step), verdict, reason))
    for path, (qname, _args, step) in before.seen.items():
        entry = results.get(path)
        if path not in after.seen and isinstance(entry, dict) and "r" in entry:
            report.lines.append(Line(path, step_text(step), REMOVED, f"the new program does not call {qname} here"))
    if run.failure is not None:
        report.stopped = str(run.failure)[:300]
    if in_flight is not None:
        report.conflicts = [line for line in report.lines if line.verdict in (AGAIN, REMOVED)
                            and isinstance(results.get(line.path), dict) and "r" in results[line.path]]
        for path in in_flight:
            old, new = before.seen.get(path), after.seen.get(path)
            if old is None:
                continue
            if new is None:
                report.conflicts.append(Line(path, step_text(old[2]), "in flight", "the new program does not call "
                                             f"{old[0]} here"))
            elif call_digest(old[0], old[1]) != call_digest(new[0], new[1]):
                reason = (f"facet changed: {old[0]} → {new[0]}" if old[0] != new[0] else _differences(old[1], new[1]))
                report.conflicts.append(Line(path, step_text(new[2]), "in flight", reason))
    return report
