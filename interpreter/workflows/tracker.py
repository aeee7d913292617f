"""The run's records on Temporal: records.py's ``Records`` with the workflow's clock, details and logger.

Records are stamped with workflow time (replay stamps them alike), the
current details are the Web UI's (``workflow.set_current_details``) and log
lines go to the workflow's logger, which stays silent during replay.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio import workflow

from .records import Records


class Tracker(Records):
    """The records of one history, kept by its workflow (keywords as ``Records`` takes them)."""

    def __init__(self, workflow_id: str, run_id: str, program_hash: str, **given: Any):
        super().__init__(workflow_id, run_id, program_hash, clock=workflow.now, show=workflow.set_current_details,
                         logger=workflow.logger,
                         later=lambda publish: asyncio.get_running_loop().call_soon(publish), **given)
