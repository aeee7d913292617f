"""The Temporal server a benchmark runs against: the one ``--address`` names, or a dev server of its own."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def temporal_server(address: str | None) -> Iterator[str]:
    """``address`` as given, or the address of a fresh local dev server that is stopped on exit.

    A fresh server listens before it answers: connect with ``connect(..., retry_for=...)``.
    """
    if address:
        yield address
        return
    from interpreter.local import start_temporal

    service = start_temporal(ui=False)
    try:
        yield service.address
    finally:
        service.stop()
