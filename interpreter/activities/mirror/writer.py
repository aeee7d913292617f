"""MirrorWriter: the MirrorSink that never blocks a workflow and never loses a record.

``write(records)`` appends the records to a local spool file and an
in-memory queue and returns at once. A background thread turns them into
idempotent upserts (documents.py) and sends them in ordered bulk writes, one
per collection. While MongoDB is unreachable it retries with backoff; the
spool keeps every record, so a crashed process's records are picked up by the
next writer on the same spool directory, servers and database ("orphan" spools).
The spool is truncated whenever everything in it has reached MongoDB.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections import deque
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pymongo import InsertOne, MongoClient, UpdateMany, UpdateOne
from pymongo.errors import (
    AutoReconnect,
    BulkWriteError,
    ConnectionFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
)

from ...program.mirror_records import MirrorRecord
from ..private_files import open_private, private_dir
from ..program_store import require_workflow
from . import documents, entries, ids, schema

log = logging.getLogger(__name__)

_NETWORK_ERRORS = (AutoReconnect, ConnectionFailure, ServerSelectionTimeoutError)
DUPLICATE_KEY = 11000


def default_spool_dir() -> Path:
    return Path(os.environ.get("FFL_MIRROR_SPOOL") or Path.home() / ".ffl" / "mirror-spool")


def database_from_uri(uri: str, database: str | None = None) -> str:
    """The explicit database, else the one the URI names, else the original runtime's ``facetwork``."""
    if database:
        return database
    from pymongo.uri_parser import parse_uri

    try:
        return parse_uri(uri).get("database") or schema.DEFAULT_DATABASE
    except Exception:  # noqa: BLE001 - an odd URI still gets the default database
        return schema.DEFAULT_DATABASE


def server_tag(uri: str) -> str:
    """A short name of the MongoDB servers ``uri`` points at (its hosts, not its credentials or options)."""
    from pymongo.uri_parser import parse_uri

    try:
        hosts = ",".join(sorted(f"{host}:{port}" for host, port in parse_uri(uri)["nodelist"]))
    except Exception:  # noqa: BLE001 - an odd URI is still a name
        hosts = uri
    return hashlib.sha256(hosts.encode()).hexdigest()[:10]


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


class MirrorWriter:
    """Batches mirror records into MongoDB from a background thread (a ``MirrorSink``).

    ``program_store`` (a ProgramStore) lets the writer pin each runner's
    compiled program (``compiled_ast``) from the ``program_hash`` of its record.
    """

    def __init__(
        self,
        uri: str,
        database: str | None = None,
        *,
        spool_dir: str | Path | None = None,
        program_store: Any = None,
        batch_size: int = 500,
        max_memory_records: int = 100_000,
        server_selection_timeout_ms: int = 1000,
        max_backoff: float = 5.0,
    ) -> None:
        self.database = database_from_uri(uri, database)
        self._client: MongoClient = MongoClient(
            uri,
            serverSelectionTimeoutMS=server_selection_timeout_ms,
            connectTimeoutMS=server_selection_timeout_ms,
            socketTimeoutMS=max(10_000, server_selection_timeout_ms),
            connect=False,
            journal=True,  # a batch counts as delivered (and leaves the spool) once it survives a MongoDB crash
        )
        self._db = self._client[self.database]
        self._program_store = program_store
        self._batch_size = batch_size
        self._max_memory = max_memory_records
        self._max_backoff = max_backoff
        self._cond = threading.Condition()
        self._queue: deque[dict[str, Any]] = deque()
        self._overflow = False
        self._in_flight = 0
        self._stopping = False
        self._indexes_ready = False
        self._pinned: set[str] = set()
        self.written = 0
        self.dropped = 0
        self.last_error: str | None = None
        self._spool_dir = Path(spool_dir) if spool_dir else default_spool_dir()
        self._spool_prefix = f"{self.database}-{server_tag(uri)}"  # a dead writer's records go to its own server
        self._spool_path, self._spool = self._open_spool()
        self._adopt_orphans()
        self._thread = threading.Thread(target=self._run, name=f"ffl-mirror-{self.database}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public API

    @property
    def db(self) -> Any:
        return self._db

    @property
    def pending(self) -> int:
        with self._cond:
            return len(self._queue) + (1 if self._overflow else 0)

    def write(self, records: Sequence[MirrorRecord]) -> None:
        """Queue records for MongoDB; returns at once and never raises."""
        try:
            records = [dict(r) for r in records if isinstance(r, dict)]
            if not records:
                return
            lines = "".join(json.dumps(r, default=_json_default, separators=(",", ":")) + "\n" for r in records)
            with self._cond:
                self._append_spool(lines)
                if self._overflow or len(self._queue) + len(records) > self._max_memory:
                    self._overflow = True  # the spool holds them; reloaded once memory drains
                else:
                    self._queue.extend(records)
                self._cond.notify_all()
        except Exception as exc:  # noqa: BLE001 - the mirror must never fail a workflow
            log.warning("mirror: could not queue %d records: %s", len(records), exc)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until every queued record is in MongoDB; False if ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        with self._cond:
            self._cond.notify_all()
            while self._queue or self._overflow or self._in_flight:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._thread.is_alive():
                    return False
                self._cond.wait(min(remaining, 0.1))
            return True

    def close(self, timeout: float = 10.0) -> bool:
        """Flush (up to ``timeout``), stop the thread, close the client; unsent records stay spooled."""
        done = self.flush(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout=max(1.0, timeout))
        with self._cond:
            empty = not self._queue and not self._overflow
            with contextlib.suppress(OSError):
                self._spool.close()
            if empty:
                with contextlib.suppress(OSError):
                    self._spool_path.unlink()
        self._client.close()
        return done

    def __enter__(self) -> MirrorWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ spool

    def _open_spool(self) -> tuple[Path, Any]:
        private_dir(self._spool_dir)  # owner-only: spooled records hold the runs' parameters and returns
        path = self._spool_dir / f"{self._spool_prefix}-{uuid.uuid4().hex}.jsonl"
        handle = open_private(path, "a+")
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return path, handle

    def _append_spool(self, lines: str) -> None:
        try:
            self._spool.write(lines)
            self._spool.flush()
        except (OSError, ValueError) as exc:
            log.warning("mirror: spool %s not writable: %s", self._spool_path, exc)

    def _adopt_orphans(self) -> None:
        """Take over spools of writers that died before reaching MongoDB."""
        for path in sorted(self._spool_dir.glob(f"{self._spool_prefix}-*.jsonl")):
            if path == self._spool_path:
                continue
            try:
                with open(path, encoding="utf-8") as handle:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    records = _read_records(handle.read())
                    if records:
                        self.write(records)
                    path.unlink()
            except OSError:
                continue  # locked: its writer is alive

    def _reload_spool(self) -> None:
        """After an overflow: the spool holds every unsent record (and some sent ones, harmless)."""
        try:
            self._spool.seek(0)
            records = _read_records(self._spool.read())
        except OSError as exc:
            log.warning("mirror: spool %s unreadable, %s", self._spool_path, exc)
            records = []
        self._queue.extend(records)
        self._overflow = False

    def _truncate_spool(self) -> None:
        try:
            self._spool.seek(0)
            self._spool.truncate()
        except OSError as exc:
            log.warning("mirror: could not truncate spool %s: %s", self._spool_path, exc)

    # ------------------------------------------------------------------ background thread

    def _run(self) -> None:
        backoff = 0.0
        while True:
            with self._cond:
                while not self._stopping and not self._queue and not self._overflow:
                    self._cond.wait(1.0)
                if self._stopping:
                    return
                if not self._queue and self._overflow:
                    self._reload_spool()
                batch = [self._queue[i] for i in range(min(self._batch_size, len(self._queue)))]
                self._in_flight = len(batch)
            ok = self._send(batch)
            with self._cond:
                self._in_flight = 0
                if ok:
                    for _ in batch:
                        self._queue.popleft()
                    if not self._queue and not self._overflow:
                        self._truncate_spool()
                    backoff = 0.0
                else:
                    backoff = min(self._max_backoff, backoff * 2 or 0.1)
                self._cond.notify_all()
                resume = time.monotonic() + (0.0 if ok else backoff)
                while not self._stopping and (left := resume - time.monotonic()) > 0:
                    self._cond.wait(left)  # new writes do not cut the backoff short

    def _send(self, batch: list[dict[str, Any]]) -> bool:
        """Write one batch; False means MongoDB is unreachable and the batch must be retried."""
        try:
            if not self._indexes_ready:
                schema.ensure_indexes(self._db)
                self._indexes_ready = True
            ops = self._build(batch)
            self._bulk(ops)
            self._after(batch)
            self.written += len(batch)
            self.last_error = None
            return True
        except _NETWORK_ERRORS as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.info("mirror: MongoDB unreachable, will retry: %s", exc)
            return False
        except PyMongoError as exc:
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning("mirror: batch rejected (%s); writing its records one by one", exc)
            return self._send_one_by_one(batch)
        except Exception as exc:  # noqa: BLE001 - a bug here must not stop the thread
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.exception("mirror: unexpected error; retrying")
            return False

    def _send_one_by_one(self, batch: list[dict[str, Any]]) -> bool:
        for record in batch:
            try:
                self._bulk(self._build([record]))
                self._after([record])
                self.written += 1
            except _NETWORK_ERRORS:
                return False
            except PyMongoError as exc:
                self.dropped += 1
                log.warning("mirror: dropping record MongoDB rejects (%s): %.200r", exc, record)
        return True

    def _build(self, batch: list[dict[str, Any]]) -> dict[str, list[UpdateOne]]:
        by_collection: dict[str, list[UpdateOne]] = {}
        for record in batch:
            try:
                ops = documents.build_ops(record)
            except documents.RecordError as exc:
                self.dropped += 1
                log.warning("mirror: dropping record: %s", exc)
                continue
            for op in ops:
                if op.insert_only:  # a log entry: written once, never changed
                    by_collection.setdefault(op.collection, []).append(InsertOne(op.preview()))
                    continue
                for filter_, update, upsert in op.updates():
                    request = UpdateMany(filter_, update) if op.many else UpdateOne(filter_, update, upsert=upsert)
                    by_collection.setdefault(op.collection, []).append(request)
        return by_collection

    def _bulk(self, by_collection: dict[str, list[Any]]) -> None:
        for collection, requests in by_collection.items():
            if all(isinstance(r, InsertOne) for r in requests):
                _insert_new(self._db[collection], requests)
            else:
                self._db[collection].bulk_write(requests, ordered=True)

    def _after(self, batch: list[dict[str, Any]]) -> None:
        """Derived fields: a runner's duration and pinned program; the order of handler log entries."""
        tasks = {(r["workflow_id"], r["run_id"], r["activity_id"]) for r in batch
                 if r.get("kind") in ("task", "task_log") and r.get("workflow_id") and r.get("run_id")
                 and r.get("activity_id")}  # fmt: skip
        entries.resolve_orders(self._db, tasks)
        for record in batch:
            if record.get("kind") != "runner" or not record.get("workflow_id") or not record.get("run_id"):
                continue
            runner_id = ids.runner_uuid(record["workflow_id"], record["run_id"])
            if record.get("state") in schema.FINISHED_RUNNER_STATES | {"canceled"}:
                doc = self._db[schema.RUNNERS].find_one({"_id": runner_id}, {"start_time": 1, "end_time": 1})
                if doc and doc.get("start_time") and doc.get("end_time"):
                    duration = max(0, doc["end_time"] - doc["start_time"])
                    self._db[schema.RUNNERS].update_one({"_id": runner_id}, {"$set": {"duration": duration}})
            self._pin_program(runner_id, record)

    def _pin_program(self, runner_id: str, record: dict[str, Any]) -> None:
        program_hash, qname = record.get("program_hash"), record.get("workflow")
        if self._program_store is None or not program_hash or not qname or runner_id in self._pinned:
            return
        try:
            text, _ = self._program_store.fetch(qname, program_hash)
            program = json.loads(text)  # parsed once: fetch leaves checking the workflow to its caller
            require_workflow(program, qname, program_hash)
        except Exception as exc:  # noqa: BLE001 - a missing program only leaves compiled_ast empty
            log.warning("mirror: program %s for %s not loadable: %s", program_hash, qname, exc)
            program = None
        if program is not None:
            workflow_ast = (program.get("facets") or {}).get(qname)
            documentation = (workflow_ast or {}).get("doc")
            self._db[schema.RUNNERS].update_one(
                {"_id": runner_id, "compiled_ast": None},
                {"$set": {"compiled_ast": program, "workflow_ast": workflow_ast,
                          "workflow.documentation": documentation}},
            )
            if documentation:
                run_workflow = ids.run_workflow_uuid(record["workflow_id"], record["run_id"])
                self._db[schema.WORKFLOWS].update_one({"_id": run_workflow}, {"$set": {"documentation": documentation}})
        if len(self._pinned) > 10_000:
            self._pinned.clear()
        self._pinned.add(runner_id)


def _insert_new(collection: Any, requests: list[Any]) -> None:
    """Insert documents in one unordered bulk; one that is there already (written before) is no error.

    An insert per entry is several times cheaper than an upsert per entry.
    """
    try:
        collection.bulk_write(requests, ordered=False)
    except BulkWriteError as exc:
        others = [e for e in exc.details.get("writeErrors", []) if e.get("code") != DUPLICATE_KEY]
        if others or exc.details.get("writeConcernErrors"):
            raise


def _read_records(text: str) -> list[dict[str, Any]]:
    records = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a crash
        if isinstance(value, dict):
            records.append(value)
    return records
