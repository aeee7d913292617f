"""The one place that reads ``workflow.patched``: which release's behaviour a run has, as one ordered level.

Each release that changed the commands a run emits added a patch (docs/upgrading.md); a run started by a
release has every patch up to it, so one ``Level`` says everything. The rest of the workflow builds whole
objects per level (which effects layers a run has, which options its activities get) instead of testing
patch ids where it goes. Patch markers are recorded where they are read, so the order and place of the
reads here are part of every recorded history. Up to SHORT_TASKS a run recorded every patch it had, in
release order: RUN_METADATA right after LoadProgram, before the run's memo is written (``describe``), then
CONTROL, SCALE, CHILD_RUN_IDS, LIFECYCLE, SNAPSHOT and SHORT_TASKS. Since LOCAL_LOAD a run records one
marker, its newest patch, read first of all (``fresh_level``, newest first): a history that has it has every
earlier patch, one that lacks it reads the old chain, so each later release adds one read at the front.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from temporalio import workflow

RUN_METADATA_PATCH = "ffl-run-metadata"
"""After 0.1.0: a run's memo also names its workflow, namespace and sources, and FFL's search attributes are
upserted where registered. 0.1.0 histories upserted the program hash alone."""

CONTROL_PATCH = "ffl-control"
"""After 0.2.0.dev0: built-in steps, signals and updates, policies, the default heartbeat timeout, activities
that wait for their handlers' cancellation and catch blocks that clean up a cancelled run."""

SCALE_PATCH = "ffl-scale"
"""After 0.2.0.dev1: child workflows for large foreach blocks, continue-as-new with a memo, handlers as local
activities where the interpreter serves them, values by reference."""


CHILD_RUN_IDS_PATCH = "ffl-child-run-ids"
"""After 0.2.0.dev2: a child's workflow id holds the logical run's first run id, so a run started again under
the same workflow id never collides with children of a terminated run still closing."""

LIFECYCLE_PATCH = "ffl-lifecycle"
"""After 0.2.0.dev2: the seed's step lifecycle (an event facet's script before its handler, yields captured
after script blocks, the first matching when case winning), workflow outputs checked, integral doubles
fitting Long."""

SNAPSHOT_PATCH = "ffl-snapshot"
"""After 0.2.0.dev3: a run continued as new restores the units its predecessors completed from a snapshot
(semantics/snapshot.py) instead of re-running them against the memo, so it no longer yields every 500
restored steps; the memo keeps only what the snapshot does not answer. A local activity weighs as six events
towards the history limit, and a workflow task ends (an ``ffl.Tick``) after 800 of them."""

SHORT_TASKS_PATCH = "ffl-short-tasks"
"""After 0.2.0.dev4: a local activity weighs as fourteen events and a workflow task ends after 300 of them
(continuation.LocalPace), so each history of a long local chain replays in about a second and no task
lasts past two."""


LOCAL_LOAD_PATCH = "ffl-local-load"
"""After 0.2.0.dev5: the program loads as a local activity within the run's first workflow task (no second
task and server round trip before the first step), and a run records this one patch marker instead of one per
release (fresh_level); a child of such a run loads its program the same way and records no marker."""


BRIEF_TASKS_PATCH = "ffl-brief-tasks"
"""After 0.2.0.dev6: a workflow task runs at most 200 local activities and a local activity weighs as twenty
events (continuation.LocalPace), and a run whose program took LoadProgram long to load ends its first task
with it, parses the program in a second and starts its steps in a third (loading.load_pinned), so no task of
a 50,000-step chain lasts two seconds on a loaded machine."""


class Level(IntEnum):
    """What a run supports, by the release that started it."""

    FIRST = 0  # 0.1.0
    RUN_METADATA = 1  # 0.2.0.dev0
    CONTROL = 2  # 0.2.0.dev1
    SCALE = 3  # 0.2.0.dev2
    CHILD_RUN_IDS = 4  # 0.2.0.dev3, with LIFECYCLE
    LIFECYCLE = 5
    SNAPSHOT = 6  # 0.2.0.dev4
    SHORT_TASKS = 7  # 0.2.0.dev5
    LOCAL_LOAD = 8  # 0.2.0.dev6
    BRIEF_TASKS = 9  # 0.2.0.dev7


NEWEST_FIRST = ((BRIEF_TASKS_PATCH, Level.BRIEF_TASKS), (LOCAL_LOAD_PATCH, Level.LOCAL_LOAD))
"""The patches a run records alone, newest first: a later release puts its own at the front."""


def fresh_level() -> Level | None:
    """The level of a run started since LOCAL_LOAD (read before it loads its program), or None for an older
    run, whose level ``run_level`` reads after LoadProgram as it always did."""
    for patch, level in NEWEST_FIRST:
        if workflow.patched(patch):
            return level
    return None


def run_level(describe: Callable[[bool], None], fresh: Level | None) -> Level:
    """The level of a workflow run (``fresh`` when ``fresh_level`` found it); ``describe(with_metadata)``
    writes its memo between the first read and the others, where every release since 0.2.0.dev0 has written it."""
    if fresh is not None:
        describe(True)
        return fresh
    metadata = workflow.patched(RUN_METADATA_PATCH)
    describe(metadata)
    if not metadata:
        return Level.FIRST
    if not workflow.patched(CONTROL_PATCH):
        return Level.RUN_METADATA
    if not workflow.patched(SCALE_PATCH):
        return Level.CONTROL
    if not workflow.patched(CHILD_RUN_IDS_PATCH):
        return Level.SCALE
    if not workflow.patched(LIFECYCLE_PATCH):
        return Level.CHILD_RUN_IDS
    if not workflow.patched(SNAPSHOT_PATCH):
        return Level.LIFECYCLE
    return Level.SHORT_TASKS if workflow.patched(SHORT_TASKS_PATCH) else Level.SNAPSHOT


class NewerRun(RuntimeError):
    """A run of a later release than this worker's: its workflow task fails and is retried, so the run waits
    (nothing lost) until a worker of that release, or a newer one, takes it."""


def known_level(parent: int) -> None:
    """Refuse, before the child does anything, a parent's level this release does not know."""
    newest = max(Level)
    if parent > newest:
        raise NewerRun(f"this child's run was started by a newer release of the FFL interpreter (level {parent}; "
                       f"this worker runs up to level {int(newest)}): upgrade this worker, the child waits for it")


def child_level(parent: int) -> Level:
    """A child workflow (a chunk of a foreach) runs at its parent's level, which its request names (children
    exist since SCALE); up to SHORT_TASKS it recorded the CONTROL marker alone, since LOCAL_LOAD none."""
    level = Level(max(parent, Level.SCALE))
    if level < Level.LOCAL_LOAD:
        workflow.patched(CONTROL_PATCH)
    return level
