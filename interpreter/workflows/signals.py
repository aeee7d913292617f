"""Signals and updates on Temporal: mailboxes.py's mailboxes, the wait of an ``ffl.WaitForSignal`` step and
the payloads' decoding.

A wait is a workflow condition (with the step's timeout as its timer); an
arrival is stamped with workflow time, so replay records it alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.values import scan_json

from .mailboxes import Mailboxes, Waiter


def decode_payload(args: Sequence[RawValue], name: str) -> Any:
    """The payload of a signal or update: its first argument (null without one); refused when unsafe JSON."""
    if not args:
        return None
    payload = args[0].payload
    if payload.metadata.get("encoding") == b"json/plain":
        problem = scan_json(payload.data)
        if problem is not None:
            raise ApplicationError(f"signal '{name}': payload {problem}", type="InvalidSignal", non_retryable=True)
    try:
        return workflow.payload_converter().from_payload(payload, None)
    except Exception as err:  # not JSON, an unknown encoding (KeyError), too deep ...
        raise ApplicationError(f"signal '{name}': payload cannot be decoded: {type(err).__name__}: {err}"[:2000],
                               type="InvalidSignal", non_retryable=True) from None


class Signals(Mailboxes):
    """The run's mailboxes; ``wait`` is what an ``ffl.WaitForSignal`` step does."""

    def __init__(self) -> None:
        super().__init__(workflow.now)

    # ------------------------------------------------------------------ waiting

    async def wait(self, name: str, timeout: float | None, path: str, summary: str = "") -> tuple[Any, bool]:
        """The next payload of ``name`` for the step at ``path``: (payload, timed_out); ``summary`` names the timeout's
        timer in the Web UI."""
        box = self.box(name)
        if box.kept:
            index, payload = box.kept.popleft()
            self._taken(index, path)
            return payload, False
        if timeout is not None and timeout <= 0:  # only a payload already kept will do
            return None, True
        waiter = Waiter(path)
        box.waiting.append(waiter)
        try:
            await workflow.wait_condition(waiter.done.done, timeout=timedelta(seconds=timeout) if timeout is not None else None,
                                          timeout_summary=summary)
        except TimeoutError:
            if not waiter.done.done():
                waiter.done.cancel()
                return None, True
        except asyncio.CancelledError:
            if not waiter.done.done():
                waiter.done.cancel()
            raise
        return waiter.done.result(), False
