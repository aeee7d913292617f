"""How a run reads to a person: steps as written, readable paths, run summaries and progress.

Pure text functions shared by the workflow (activity summaries and current
details the Temporal Web UI shows) and the command line (``ffl status``,
progress). They only format what they are given, so the workflow stays
deterministic: the same program and path always give the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from .exprtext import expr_text
from .model import Call, Step

STEP_TEXT_LIMIT = 96
"""Characters of a step's text in an activity summary (the UI shows one line)."""

SUMMARY_LIMIT = 200
"""Characters of one summary line (Temporal's UI shows user-metadata summaries on one line)."""

PATH_SEPARATOR = " › "

_BLOCK = re.compile(r"b\d+")
_CASE = re.compile(r"c(\d+)")


def shorten(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def call_text(call: Call) -> str:
    """A call as FFL writes it: ``calc.Add(x = $.a, y = $.a) with Retry(n = 3)``."""
    name = call.facet or call.name
    args = ", ".join(f"{arg.name} = {expr_text(arg.value)}" for arg in call.args)
    text = f"{name}({args})"
    for mixin in call.mixins:
        mixed = ", ".join(f"{arg.name} = {expr_text(arg.value)}" for arg in mixin.args)
        text += f" with {mixin.facet or mixin.name}({mixed})" + (f" as {mixin.alias}" if mixin.alias else "")
    return text


def step_text(step: Step, limit: int = STEP_TEXT_LIMIT) -> str:
    """``s = calc.Add(x = $.a, y = $.a)``, shortened to ``limit`` characters."""
    return shorten(f"{step.name} = {call_text(step.call)}", limit)


def readable_path(path: str, root: str = "", items: Mapping[str, str] | None = None) -> str:
    """``b0/all/b0/foreach[2]/who/c0/f`` → ``Greet › all › foreach[2] › who › case 0 › f``.

    Block indices (``b0``) are left out: they name the n-th andThen clause,
    which the step names around them already place. ``root`` (the workflow's
    name) leads the path. ``items`` (an iteration's path → ``file="a.csv"``)
    says which element each iteration handles: ``foreach[2] file="a.csv"``.
    """
    parts: list[str] = [root] if root else []
    prefix = ""
    for segment in path.split("/") if path else []:
        prefix = f"{prefix}/{segment}" if prefix else segment
        if _BLOCK.fullmatch(segment):
            continue
        case = _CASE.fullmatch(segment)
        item = items.get(prefix) if items else None
        parts.append(f"case {case.group(1)}" if case else f"{segment} {item}" if item else segment)
    return PATH_SEPARATOR.join(parts)


ITEM_TEXT_LIMIT = 40
"""Characters of an iteration's element shown beside its ``foreach[i]``."""


def item_text(variable: str, element: object) -> str:
    """``file="corrupt.csv"``: the element an iteration handles, short, at a cost that does not grow with it."""
    if isinstance(element, str):
        element = element[:ITEM_TEXT_LIMIT]
    elif isinstance(element, (dict, list)) and (len(element) > 8 or not all(
            isinstance(v, (int, float, bool, type(None))) or (isinstance(v, str) and len(v) <= ITEM_TEXT_LIMIT)
            for v in (element.values() if isinstance(element, dict) else element))):
        count, plural = len(element), "" if len(element) == 1 else "s"
        return f"{variable}={{{count} key{plural}}}" if isinstance(element, dict) else f"{variable}=[{count} item{plural}]"
    return f"{variable}={json_short(element, ITEM_TEXT_LIMIT)}"


def duration_text(seconds: float) -> str:
    """``1 h``, ``90 s``, ``2 h 30 min``: a timeout as a person reads it."""
    whole = int(seconds)
    if whole != seconds or whole < 60:
        return f"{seconds:g} s"
    parts = [(whole // 86400, "d"), (whole // 3600 % 24, "h"), (whole // 60 % 60, "min"), (whole % 60, "s")]
    return " ".join(f"{count} {unit}" for count, unit in parts if count)


def short_name(qname: str) -> str:
    return qname.rsplit(".", 1)[-1]


def activity_summary(text: str, path: str, root: str, items: Mapping[str, str] | None = None) -> str:
    """An activity's (or timer's) one-line summary: the step as written, then where it runs."""
    return shorten(f"{text} · {readable_path(path, root, items)}", SUMMARY_LIMIT)


def script_summary(owner: str, path: str, root: str) -> str:
    return shorten(f"script of {owner or 'the workflow'} · {readable_path(path, root)}", SUMMARY_LIMIT)


def program_line(workflow: str, program_hash: str, sources: Iterable[str] = ()) -> str:
    """``hello.Greet · program 1a2b3c4d5e6f · program.ffl``: the run's one-line summary."""
    files = [name.rsplit("/", 1)[-1] for name in sources]
    text = f"{workflow} · program {program_hash[:12]}" if program_hash else workflow
    if files:
        text += " · " + ", ".join(files[:4]) + (f" +{len(files) - 4} more" if len(files) > 4 else "")
    return shorten(text, SUMMARY_LIMIT)


def program_details(workflow: str, program_hash: str, sources: Iterable[str] = (), namespace: str = "") -> str:
    """Markdown the Web UI shows under the run's details: what program this run executes."""
    files = list(sources)
    lines = [f"**FFL workflow** `{workflow}`" + (f" in namespace `{namespace}`" if namespace else "")]
    if program_hash:
        lines.append(f"**program** `{program_hash}`")
    if files:
        lines.append("**sources** " + ", ".join(f"`{name}`" for name in files))
    return "\n\n".join(lines)


def progress_text(counts: Mapping[str, int], current: str | None = None, waiting: int = 0) -> str:
    """``steps: 3 done, 1 running, 0 failed`` (plus waiting and cancelled when any) and the current step.

    ``waiting`` of the running steps wait for a timer or a signal: they are counted as waiting.
    """
    done = counts.get("completed", 0) + counts.get("caught", 0)
    text = f"steps: {done} done, {counts.get('running', 0) - waiting} running, {counts.get('failed', 0)} failed"
    if waiting:
        text += f", {waiting} waiting"
    if counts.get("cancelled"):
        text += f", {counts['cancelled']} cancelled"
    if current:
        text += f" · current: {current}"
    return text


def wait_text(note: str, signal: str | None, workflow_id: str) -> str:
    """What a built-in step waits for, with the ``ffl signal`` line that answers a signal."""
    return note + (f" — ffl signal {workflow_id} {signal} '{{…}}'" if signal else "")


def current_details(header: str, counts: Mapping[str, int], current: str | None = None, waiting: int = 0) -> str:
    """The run's live details (markdown): the program it runs, then its progress."""
    progress = progress_text(counts, current, waiting)
    return f"{header}\n\n{progress}" if header else progress


def json_short(value: object, width: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= width else text[: width - 1] + "…"
