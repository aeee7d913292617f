"""Cancellation with cleanup: what a step does when its run is cancelled.

``temporal workflow cancel`` (or ``ffl cancel``) cancels the run's main task;
the cancellation travels down the steps' tasks to the activities, which are
scheduled with ``WAIT_CANCELLATION_COMPLETED`` so a step waits until its
handler has acknowledged (the handler activity tells its handler: see
activities/dispatch.py). Each step that the cancellation passes through, on
its way back up, runs its catch (its own or its facet's) as cleanup, with
``error_type == "Cancelled"``, in a shielded task so the cleanup's own
activities run to the end; then the step is recorded ``cancelled`` and the
cancellation goes on to the enclosing step, and finally ends the run as
cancelled. Temporal delivers one cancellation per run: a second request is
``ffl cancel`` terminating the run at once (no workflow code runs then).

All of it is behind CONTROL_PATCH: a run started before it replays as it ran.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from temporalio.exceptions import ActivityError, CancelledError

CONTROL_PATCH = "ffl-control"
"""Patch introduced after release 0.2.0.dev0: built-in steps, signals and updates, policies, the default heartbeat
timeout, activities that wait for their handlers' cancellation and catch blocks that clean up a cancelled run.
Runs started before it keep the earlier behaviour when they replay."""

CANCELLED_TYPE = "Cancelled"
"""The ``error_type`` a catch block sees when it runs as the cleanup of a cancelled step."""

CANCELLED_MESSAGE = "the run was cancelled"

T = TypeVar("T")


def cancelled_activity(err: ActivityError) -> bool:
    """Whether an activity ended because it was cancelled (only a run's cancellation cancels one)."""
    return isinstance(err.cause, CancelledError)


def cancelled_returns() -> dict[str, Any]:
    """What a catch block reads of a cancelled step: ``error`` and ``error_type``."""
    return {"error": CANCELLED_MESSAGE, "error_type": CANCELLED_TYPE}


async def shielded(work: Callable[[], Awaitable[T]]) -> T:
    """Run ``work`` to its end even if the awaiting task is cancelled again (a cleanup is never cut short)."""
    task = asyncio.ensure_future(work())
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                return task.result()
            continue
