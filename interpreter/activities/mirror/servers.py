"""ServerRegistration: a worker's document in the servers collection, kept alive by pings.

``start()`` records the worker (state ``startup``, then ``running``), a
background thread refreshes ``ping_time`` (and the handled counts) every few
seconds, and ``stop()`` records ``shutdown``. A dashboard treats a running
server whose ping is old as dead. Everything goes through the MirrorSink, so
registration never blocks a worker that cannot reach MongoDB.
"""

from __future__ import annotations

import socket
import threading
import uuid
from collections.abc import Iterable
from typing import Any

from .ids import now_ms


def host_ips(hostname: str) -> list[str]:
    try:
        return sorted(set(socket.gethostbyname_ex(hostname)[2]))
    except OSError:
        return []


class ServerRegistration:
    """One worker process in the servers collection; ``topics`` are its task queues."""

    def __init__(
        self,
        sink: Any,
        *,
        queues: Iterable[str] = (),
        handlers: Iterable[str] = (),
        group: str = "ffl",
        service: str = "worker",
        server_name: str | None = None,
        manager: str = "",
        ping_interval: float = 5.0,
    ) -> None:
        self.sink = sink
        self.uuid = str(uuid.uuid4())
        self.ping_interval = ping_interval
        self.server_name = server_name or socket.gethostname()
        self._static = {
            "server_group": group,
            "service_name": service,
            "server_name": self.server_name,
            "server_ips": host_ips(self.server_name),
            "topics": sorted(set(queues)),
            "handlers": sorted(set(handlers)),
            "manager": manager,
        }
        self._start_time = now_ms()
        self._counts: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _record(self, state: str, error: str | None = None) -> dict[str, Any]:
        with self._lock:
            handled = [{"handler": name, "handled": ok, "not_handled": failed}
                       for name, (ok, failed) in sorted(self._counts.items())]  # fmt: skip
        record = {"kind": "server", "uuid": self.uuid, **self._static, "state": state,
                  "start_time": self._start_time, "time": now_ms(), "handled": handled}  # fmt: skip
        if error is not None:
            record["error"] = {"message": error}
        return record

    def count(self, handler: str, ok: bool) -> None:
        """Count one handled (ok) or not handled (failed) task for ``handler``."""
        with self._lock:
            counts = self._counts.setdefault(handler, [0, 0])
            counts[0 if ok else 1] += 1

    def start(self) -> ServerRegistration:
        """Record startup, then running, and start pinging."""
        self.sink.write([self._record("startup")])
        self.sink.write([self._record("running")])
        self._thread = threading.Thread(target=self._ping_loop, name=f"ffl-server-{self.uuid[:8]}", daemon=True)
        self._thread.start()
        return self

    def ping(self) -> None:
        self.sink.write([self._record("running")])

    def _ping_loop(self) -> None:
        while not self._stop.wait(self.ping_interval):
            self.ping()

    def fail(self, error: str) -> None:
        """Record the error state (a worker that cannot serve any more)."""
        self.sink.write([self._record("error", error)])

    def stop(self) -> None:
        """Stop pinging and record shutdown (flush the sink afterwards to be sure it lands)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.ping_interval + 1)
        self.sink.write([self._record("shutdown")])

    def __enter__(self) -> ServerRegistration:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
