"""The program as LoadProgram pins it in history: lean, and compressed when large.

Temporal refuses a payload over 2 MB, and a 5,000-step program's canonical
JSON is several MB — mostly source locations, which only the compiler's
diagnostics need. The pinned form drops every ``loc`` and, past
``COMPRESS_ABOVE`` characters, travels as base64 zlib (``program_z``) instead
of plain JSON (``program``), so small programs stay readable in history.
Pure and deterministic: the workflow decodes exactly what history holds.

Parsing is the largest single piece of work of a big run's first workflow
task (~0.2 s for 5,000 steps), so the last few programs parsed are kept by the
digest of their pinned text: other runs of the same program, and replays
after a cache eviction, reuse them. Programs are never mutated once built.
"""

from __future__ import annotations

import base64
import gc
import hashlib
import json
import re
import threading
import zlib
from collections import OrderedDict
from typing import Any

from .facts import with_facts
from .gcpause import collector_paused
from .model import FORMAT_VERSION, Program
from .scripts import with_script_ids
from .serialize import ProgramFormatError

COMPRESS_ABOVE = 256 * 1024
"""Characters of lean JSON above which the pinned program is compressed."""

COMPRESS_LEVEL = 1
"""zlib's fastest level: a run's first workflow task waits for the compression (a 50,000-step program's 18 MB
took 0.14 s at level 6 and 0.05 s at level 1, for 0.82 MB of base64 instead of 0.74)."""

CACHE_SIZE = 4
"""Parsed programs kept (a 5,000-step program takes ~27 MB)."""

_cache: OrderedDict[str, Program] = OrderedDict()
_cache_lock = threading.Lock()  # workflow activations run on several threads


_LOC_BODY = r'\{"col":-?\d+,"file":"((?:[^"\\]|\\.)*)","line":-?\d+\}'
_LOC_AFTER_KEYS = re.compile(r',"loc":' + _LOC_BODY)
_LOC_FIRST = re.compile(r'\{"loc":' + _LOC_BODY + ',?')
"""A node's ``loc`` in canonical JSON (sorted keys, no spaces), after another key or as its first: a quote
after ``,`` or ``{`` opens a key, never a string's content (where quotes are escaped). Each pattern starts
with a literal, which the regex engine finds fast."""


def without_locations(node: Any, files: set[str]) -> Any:
    """``node`` (parsed program JSON) without its ``loc`` entries; the source files they name are added to
    ``files``, since the pinned program keeps only those names."""
    if isinstance(node, dict):
        loc = node.get("loc")
        if isinstance(loc, dict) and loc.get("file"):
            files.add(str(loc["file"]))
        return {key: without_locations(value, files) for key, value in node.items() if key != "loc"}
    if isinstance(node, list):
        return [without_locations(value, files) for value in node]
    return node


def strip_locations(text: str) -> tuple[str, list[str]]:
    """Canonical program JSON without its ``loc`` entries, and the source files they named, sorted.

    The text is edited, not parsed and written again: a 50,000-step program
    has a million locations, and walking its parsed tree took over a second
    of its run's first workflow task. Equal to dumping ``without_locations``
    of the parsed text with sorted keys (tests/runtime/test_scale.py).
    """
    files: set[str] = set()

    def after_keys(match: re.Match[str]) -> str:
        files.add(match.group(1))
        return ""

    def first(match: re.Match[str]) -> str:
        files.add(match.group(1))
        return "{"

    lean = _LOC_FIRST.sub(first, _LOC_AFTER_KEYS.sub(after_keys, text))
    return lean, sorted(json.loads(f'"{name}"') for name in files if name)


def pack_lean(lean: str) -> dict[str, str]:
    """Lean program JSON → ``{"program": json}``, or ``{"program_z": b64 zlib}`` when large."""
    if len(lean) <= COMPRESS_ABOVE:
        return {"program": lean}
    return {"program_z": base64.b64encode(zlib.compress(lean.encode("utf-8"), COMPRESS_LEVEL)).decode("ascii")}


def _parse(pinned: str, packed: bool) -> Program:
    text: str | bytes = zlib.decompress(base64.b64decode(pinned)) if packed else pinned
    program = Program.model_validate_json(text)
    if program.format != FORMAT_VERSION:
        raise ProgramFormatError(
            f"compiled program has format {program.format!r}; this interpreter reads format {FORMAT_VERSION}"
        )
    with_script_ids(program)  # pinned by a release whose compiler gave scripts no ids: the same ids, by position
    with_facts(program)  # pinned by a release whose compiler left the interpreter's facts to it: the same rules
    return program


class _Parsing:
    """One parse of a pinned program, on a thread of its own: it finishes even if its caller is interrupted."""

    def __init__(self, key: str, pinned: str, packed: bool):
        self.program: Program | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(key, pinned, packed), daemon=True,
                                       name="ffl-parse-program")
        self.thread.start()

    def _run(self, key: str, pinned: str, packed: bool) -> None:
        # Millions of new nodes: collections walking them while they are built took three quarters of the
        # parse, and the first collection after it, once the collector runs again, as long again.
        with collector_paused():
            try:
                self.program = _parse(pinned, packed)
            except BaseException as err:  # noqa: BLE001 - handed to the waiting caller
                self.error = err
            if self.program is not None:
                # A cached program lives as long as the process and holds no cycles: moved out of the
                # collector's generations before it runs again, its nodes are not walked by any later
                # collection (a collection over a 50,000-step program's in a workflow task can pass the SDK's
                # 2 s deadlock detection). An evicted program is still freed by reference counting. gc.freeze
                # moves every object alive at this moment, not only the program's: cyclic garbage alive now
                # is never collected, a small cost paid once per distinct program a worker parses.
                gc.freeze()
        with _cache_lock:
            if self.program is not None:
                _cache[key] = self.program
                while len(_cache) > CACHE_SIZE:
                    _cache.popitem(last=False)
            _parsing.pop(key, None)


_parsing: dict[str, _Parsing] = {}


def begin_unpacking(loaded: dict[str, Any]) -> None:
    """Begin parsing the program in a LoadProgram result on a thread of its own, and return at once (unless it
    is cached or under way): a run that waits a workflow task for it finds it parsed, or nearly."""
    _cached_or_begun(loaded)


def _cached_or_begun(loaded: dict[str, Any]) -> Program | _Parsing:
    packed = "program_z" in loaded
    pinned: str = loaded["program_z"] if packed else loaded["program"]
    key = ("z:" if packed else "j:") + hashlib.sha256(pinned.encode("utf-8")).hexdigest()
    with _cache_lock:
        program = _cache.get(key)
        if program is not None:
            _cache.move_to_end(key)
            return program
        parsing = _parsing.get(key)
        if parsing is None:
            parsing = _parsing[key] = _Parsing(key, pinned, packed)
        return parsing


def unpack_program(loaded: dict[str, Any]) -> Program:
    """The Program in a LoadProgram result (either form; older histories hold plain ``program``).

    Parsing runs on a thread of its own that the caller waits for: when a
    workflow task is interrupted by the SDK's deadlock detection (a
    50,000-step program takes seconds to parse), the parse still completes and
    the task's next attempt finds the program in the cache.
    """
    parsing = _cached_or_begun(loaded)
    if isinstance(parsing, Program):
        return parsing
    parsing.thread.join()
    if parsing.error is not None:
        raise parsing.error
    assert parsing.program is not None
    return parsing.program
