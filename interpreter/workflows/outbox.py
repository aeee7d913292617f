"""The mirror's outbox: the tracker's records sent in batches by Mirror activities, one at a time.

A batch is a list of the tracker's typed records (interpreter/program/mirror_records.py), which the
payload converter writes as the JSON objects the mirror's writer reads.

Records gather while a batch is in flight; when the run closes (or continues as new) it drains the
outbox, so no record is lost. A batch the Mirror activity could not deliver is logged and dropped: the
mirror must never fail or block a run.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.constants import MIRROR_ACTIVITY

from .tracker import Tracker

MIRROR_BATCH = 500
"""Most records sent in one Mirror activity; records gather while one is in flight."""

MIRROR_BATCH_BYTES = 512 * 1024
"""Most JSON bytes in one Mirror activity input (Temporal refuses payloads over 2 MB)."""


class Outbox:
    """Starts sending at once; ``drain`` waits until every record so far is sent."""

    def __init__(self, tracker: Tracker, options: workflow.ActivityConfig, max_bytes: int = MIRROR_BATCH_BYTES):
        self.tracker = tracker
        self.options = options
        self.max_bytes = max_bytes
        self.closing = False
        self.sender = asyncio.create_task(self.send())

    async def send(self) -> None:
        while True:
            await workflow.wait_condition(lambda: bool(self.tracker.buffer) or self.closing)
            if not self.tracker.buffer and self.closing:
                return
            batch = self.tracker.take(MIRROR_BATCH, self.max_bytes)
            try:
                await workflow.execute_activity(MIRROR_ACTIVITY, batch, **self.options)
            except ActivityError as err:
                workflow.logger.warning("mirror batch of %d records dropped: %s", len(batch), err)

    async def drain(self) -> None:
        if not self.sender.done():
            self.closing = True
            await self.sender
