"""The interpreter's own activities: load a pinned program, run scripts, write the mirror."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..program.config import RuntimeConfig
from ..program.constants import LOAD_PROGRAM_ACTIVITY, MIRROR_ACTIVITY, TICK_ACTIVITY
from ..program.gcpause import collector_paused
from ..program.pinned import begin_unpacking, pack_lean, strip_locations, unpack_program
from ..program.serialize import ProgramFormatError, program_data
from .program_store import (
    ProgramStore,
    ProgramTampered,
    checked_names,
    require_workflow,
    trim_program,
    trim_program_data,
)
from .recovery import recover
from .scripts import build_run_script_activity

PINNED_CACHE = 8
"""Pinned programs a worker keeps ready: trimming and packing a 50,000-step program takes seconds."""

SLOW_LOAD_SECONDS = 0.25
"""A first load at least this long is answered before its parse, with ``"settle": true``, to a run that asks
(``"settle"`` in the request, since Level.BRIEF_TASKS): the run parses the program in a workflow task of its
own (workflows.loading). A 50,000-step program's load takes 1–2 s here, and its parse about as long again."""


def current_hash(store: ProgramStore, workflow: str) -> str | None:
    """The hash ``workflow`` points at now, or None (a name that could not be published, or none published)."""
    try:
        checked_names(workflow, None)
        return store.current(workflow)
    except LookupError:
        return None


def build_interpreter_activities(store: ProgramStore, config: RuntimeConfig, mirror: object | None = None, *,
                                 allow_scripts: bool = False, identity: str = "") -> list[Callable]:
    """LoadProgram, RunScript, Tick and Recover (workflows/resume.py), plus Mirror when a sink (``write(records)``) is given.

    RunScript runs scripts only with ``allow_scripts`` (the worker's ``--allow-scripts``);
    otherwise it fails their steps, naming the flag. ``identity`` (the worker's) is named when a
    program is not found, with the registry that was searched.
    """
    config_data = config.model_dump(mode="json")
    pinned_cache: OrderedDict[tuple[str, str], dict[str, Any]] = OrderedDict()  # (workflow, hash) → pinned form

    @activity.defn(name=LOAD_PROGRAM_ACTIVITY)
    async def load_program(request: dict[str, Any]) -> dict[str, Any]:
        """``{"workflow", "hash"?, "settle"?}`` → ``{"program": json, "hash", "config", "sources", "settle"?}``,
        pinned in history.

        ``program`` is trimmed to what the workflow reaches, without source
        locations, and compressed into ``program_z`` when large (see
        program.pinned); ``hash`` names the published program.
        """
        asked = request.get("hash")
        # A program this process loaded (and verified) before is answered from its cache: continued runs and
        # children ask for the hash their run pinned again and again, new runs for the latest one, which the
        # store's pointer names; reading and hashing a 50,000-step program again takes seconds.
        latest = await asyncio.to_thread(current_hash, store, request["workflow"]) if asked is None else asked
        key = (request["workflow"], latest)
        if isinstance(latest, str) and key in pinned_cache:
            pinned_cache.move_to_end(key)
            return {**pinned_cache[key], "hash": latest, "config": config_data}

        def pin(text: str, digest: str) -> dict[str, Any]:
            # Locations are cut from the stored text (program.pinned), and only what is left is parsed, to
            # check and trim it: a 50,000-step program's first load took 3.5 s, and its run's first workflow
            # task with it.
            workflow = request["workflow"]
            with collector_paused():  # trees of millions of acyclic nodes (program/gcpause.py)
                lean, sources = strip_locations(text)
                data = program_data(lean)
                require_workflow(data, workflow, digest)
                if trim_program_data(data, workflow) is not data:  # part of the program: its files, its text
                    lean, sources = strip_locations(trim_program(text, workflow))
                return {**pack_lean(lean), "sources": sources}

        slow = False
        try:
            began = time.monotonic()
            text, digest = await asyncio.to_thread(store.fetch, request["workflow"], asked)
            key = (request["workflow"], digest)
            pinned = pinned_cache.get(key)  # children and continued runs load the same program again and again
            if pinned is None:
                pinned = pinned_cache[key] = await asyncio.to_thread(pin, text, digest)
                slow = time.monotonic() - began >= SLOW_LOAD_SECONDS
                while len(pinned_cache) > PINNED_CACHE:
                    pinned_cache.popitem(last=False)
        except LookupError as err:
            # Whoever can start a run learns which worker looked, not where (its log says): another
            # deployment's or another `ffl run`'s worker on the same queue is then plain to see.
            activity.logger.warning("%s (looked in %s)", err, store_name(store))
            looked = f" (worker {identity} looked in its {store_kind(store)})" if identity else ""
            raise ApplicationError(f"{err}{looked}", type="ProgramNotFound", non_retryable=True) from err
        except ProgramTampered as err:
            raise ApplicationError(str(err), type="ProgramTampered", non_retryable=True) from err
        answer = {**pinned, "hash": digest, "config": config_data}
        if slow and request.get("settle"):  # the run parses it in its next workflow task (workflows.loading)
            begin_unpacking(pinned)
            return {**answer, "settle": True}
        # Parse it here, for the workflows of this process: a workflow task may take 2 s at most (the SDK's
        # deadlock detector), and parsing a 50,000-step program takes longer. unpack_program keeps it.
        with contextlib.suppress(ProgramFormatError):  # a newer format: the workflow says so, clearly
            await asyncio.to_thread(unpack_program, pinned)
        return answer

    @activity.defn(name=TICK_ACTIVITY)
    async def tick() -> None:
        """Returns at once: its completion brings the run its next workflow task (see workflows.admission)."""

    activities: list[Callable] = [load_program, build_run_script_activity(store, config.scripts, allow_scripts),
                                  tick, recover]
    if mirror is not None:
        @activity.defn(name=MIRROR_ACTIVITY)
        async def mirror_records(records: list[dict[str, Any]]) -> None:
            """Hand a batch of a run's records (program/mirror_records.WorkflowRecord, as JSON objects: read
            without conversion) to the sink, which spools and never raises."""
            await asyncio.to_thread(mirror.write, records)  # type: ignore[attr-defined]

        activities.append(mirror_records)
    return activities


def store_kind(store: ProgramStore) -> str:
    """``registry`` or ``MongoDB registry``: what kind of store looked, without saying where it is."""
    return "registry" if getattr(store, "root", None) is not None else "MongoDB registry"


def store_name(store: ProgramStore) -> str:
    """Where ``store`` keeps programs, for messages: a registry directory or a MongoDB database."""
    root = getattr(store, "root", None)
    if root is not None:
        return f"registry {root}"
    database = getattr(store, "database", None)
    return f"MongoDB database {database}" if database else type(store).__name__
