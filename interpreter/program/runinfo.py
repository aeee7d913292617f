"""What a run says about its program, for finding it later: memo entries and search attributes.

The memo always carries them (it needs no registration); search attributes,
which the Web UI's filter box and ``temporal workflow list --query`` can use
(``FflProgramHash = "…"``), only where the namespace has them registered:
``ffl run``'s embedded server registers them at start, ``ffl setup`` on a
real cluster. Upserting an unregistered attribute would fail the workflow
task, so the interpreter worker checks at start and pins the answer in the
run's configuration (``RuntimeConfig.search_attributes``).
"""

from __future__ import annotations

from .constants import MEMO_PROGRAM_HASH
from .pinned import without_locations

MEMO_WORKFLOW = "ffl_workflow"
"""Memo key: the FFL workflow's declared (qualified) name."""

MEMO_NAMESPACE = "ffl_namespace"
"""Memo key: the FFL namespace the workflow is declared in ("" at top level)."""

MEMO_SOURCES = "ffl_sources"
"""Memo key: names of the source files the program was compiled from (when known)."""

SA_PROGRAM_HASH = "FflProgramHash"
SA_NAMESPACE = "FflNamespace"
SA_WORKFLOW = "FflWorkflow"

SEARCH_ATTRIBUTES: dict[str, str] = {SA_PROGRAM_HASH: "Keyword", SA_NAMESPACE: "Keyword", SA_WORKFLOW: "Keyword"}
"""The search attributes FFL runs carry, with their Temporal types."""


def namespace_of(qname: str) -> str:
    """``osm.cache.Import`` → ``osm.cache``; a top-level name has namespace ``""``."""
    return qname.rsplit(".", 1)[0] if "." in qname else ""


def run_memo(workflow: str, program_hash: str, sources: list[str] | None = None) -> dict[str, object]:
    """The memo entries of a run of ``workflow`` executing the program ``program_hash``."""
    memo: dict[str, object] = {MEMO_WORKFLOW: workflow, MEMO_NAMESPACE: namespace_of(workflow)}
    if program_hash:
        memo[MEMO_PROGRAM_HASH] = program_hash
    if sources:
        memo[MEMO_SOURCES] = list(sources)
    return memo


def run_search_attributes(workflow: str, program_hash: str) -> dict[str, str]:
    """Search attribute values of such a run (a top-level workflow has no FflNamespace)."""
    values = {SA_WORKFLOW: workflow, SA_PROGRAM_HASH: program_hash, SA_NAMESPACE: namespace_of(workflow)}
    return {name: value for name, value in values.items() if value}


def source_files(program: object) -> list[str]:
    """Source file names recorded in a compiled program's locations, sorted.

    ``program`` is the program as parsed JSON (dict/list tree); the pinned
    program drops locations, so the names are taken before it does.
    """
    files: set[str] = set()
    without_locations(program, files)
    return sorted(files)
