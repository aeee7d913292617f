"""MirrorSession: everything one worker process needs for the mirror, opened and closed together.

A worker started with ``--mongo`` makes one session: its ``writer`` is the
MirrorSink for the interpreter's Mirror activity, its ``listener`` goes to
``build_handler_activity``, and its server registration pings while the
worker runs. ``close()`` records shutdown and flushes (what cannot be sent
stays in the spool for the next writer).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .listener import MirrorTaskListener
from .servers import ServerRegistration
from .writer import MirrorWriter


class MirrorSession:
    def __init__(
        self,
        uri: str,
        database: str | None = None,
        *,
        program_store: Any = None,
        queues: Iterable[str] = (),
        handlers: Iterable[str] = (),
        service: str = "worker",
        spool_dir: str | Path | None = None,
        ping_interval: float = 5.0,
    ) -> None:
        self.writer = MirrorWriter(uri, database, spool_dir=spool_dir, program_store=program_store)
        self.registration = ServerRegistration(
            self.writer, queues=queues, handlers=handlers, service=service, ping_interval=ping_interval
        )
        self.listener = MirrorTaskListener(self.writer, self.registration)

    def start(self) -> MirrorSession:
        self.registration.start()
        return self

    def close(self, timeout: float = 10.0) -> bool:
        """Record shutdown and flush; False if MongoDB could not take everything within ``timeout``."""
        self.registration.stop()
        return self.writer.close(timeout)

    def __enter__(self) -> MirrorSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
