"""Where large values live outside Temporal's history: content-addressed blobs, written once.

One small interface (``ValueStore``: ``put``/``get``/``has`` by sha256) with
two stores: a directory every worker and client shares (``$FFL_VALUE_STORE``,
default ``~/.ffl/values``) and MongoDB GridFS (the mirror's database) when a
MongoDB URI is configured. A blob's name is the sha256 of its bytes, so
writing the same value again (a replay, a retry, another run) finds it
already there and writes nothing — unless the stored bytes no longer hash
to the name: then the write replaces them, so the next run that produces
the value repairs it. Reading verifies the digest, so a damaged blob is an
error, never a wrong value.

``ValueUnreachable`` is the error of a store that cannot be reached (MongoDB
down): the codec retries it instead of failing the value.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from .private_files import private_dir

STORE_ENV = "FFL_VALUE_STORE"
"""Directory of the shared value store (when no MongoDB URI is configured)."""


class ValueMissing(LookupError):
    """A reference whose value is in no store this process can read (another machine's directory?)."""


class ValueDamaged(ValueError):
    """A stored value whose bytes no longer hash to its name."""


class ValueUnreachable(OSError):
    """The store cannot be reached just now (it may come back): worth retrying, unlike a missing value."""


class ValueStore(Protocol):
    def put(self, digest: str, data: bytes) -> bool:
        """Store ``data`` under ``digest`` unless it is there intact; True when this call wrote (or repaired) it."""
        ...

    def get(self, digest: str) -> bytes:
        """The bytes stored under ``digest``: ValueMissing when absent, ValueDamaged when they do not match it."""
        ...

    def describe(self) -> str: ...


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def valid_digest(digest: object) -> bool:
    return isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


def checked(digest: str, data: bytes) -> bytes:
    if digest_of(data) != digest:
        raise ValueDamaged(f"stored value {digest} has been altered (its bytes no longer have that hash)")
    return data


def default_root() -> Path:
    root = os.environ.get(STORE_ENV)
    return Path(root) if root else Path.home() / ".ffl" / "values"


class DirectoryValueStore:
    """Blobs as files ``<root>/<first two hex digits>/<digest>``, owner-only, written atomically."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_root()

    def _path(self, digest: str) -> Path:
        if not valid_digest(digest):
            raise ValueMissing(f"not a value reference: {digest!r}")
        return self.root / digest[:2] / digest

    def put(self, digest: str, data: bytes) -> bool:
        path = self._path(digest)
        if path.exists() and digest_of(path.read_bytes()) == digest:
            return False
        private_dir(path.parent)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return True

    def get(self, digest: str) -> bytes:
        try:
            data = self._path(digest).read_bytes()
        except FileNotFoundError:
            raise ValueMissing(f"value {digest} is not in the value store {self.root} (set {STORE_ENV} to the "
                               "directory the workers share)") from None
        return checked(digest, data)

    def describe(self) -> str:
        return f"directory {self.root}"


class GridFSValueStore:
    """Blobs in MongoDB GridFS (bucket ``ffl_values`` of the mirror's database), ``_id`` = digest."""

    BUCKET = "ffl_values"

    def __init__(self, uri: str, database: str | None = None):
        import gridfs
        from pymongo import MongoClient

        from .mirror.writer import database_from_uri

        self.client = MongoClient(uri, serverSelectionTimeoutMS=10_000)
        self.database = database_from_uri(uri, database)
        self.fs = gridfs.GridFS(self.client[self.database], collection=self.BUCKET)

    def put(self, digest: str, data: bytes) -> bool:
        import gridfs.errors

        with self._reachable():
            if self.fs.exists(digest):
                if digest_of(self.fs.get(digest).read()) == digest:
                    return False
                self.fs.delete(digest)  # damaged: replaced by the bytes that hash to its name
            try:
                self.fs.put(data, _id=digest, filename=digest)
            except gridfs.errors.FileExists:  # another worker wrote it meanwhile
                return False
            return True

    def get(self, digest: str) -> bytes:
        import gridfs.errors

        with self._reachable():
            try:
                return checked(digest, self.fs.get(digest).read())
            except gridfs.errors.NoFile:
                raise ValueMissing(f"value {digest} is not in GridFS bucket {self.BUCKET} of database "
                                   f"{self.database}") from None

    @contextlib.contextmanager
    def _reachable(self) -> Iterator[None]:
        """MongoDB's connection errors as ValueUnreachable: the store is down, the value may be fine."""
        from pymongo.errors import ConnectionFailure

        try:
            yield
        except ConnectionFailure as err:
            raise ValueUnreachable(f"{self.describe()} is unreachable: {err}") from err

    def describe(self) -> str:
        return f"MongoDB GridFS {self.database}.{self.BUCKET}"


def open_value_store(mongo_uri: str | None = None, root: str | Path | None = None) -> ValueStore:
    """GridFS of ``mongo_uri`` when given (and no directory is asked for), else the shared directory."""
    if root is None and mongo_uri and not os.environ.get(STORE_ENV):
        return GridFSValueStore(mongo_uri)
    return DirectoryValueStore(root)
