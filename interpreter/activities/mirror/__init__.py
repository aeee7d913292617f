"""The MongoDB mirror: every run's runners, steps, tasks and logs in the original runtime's schema (docs/mirror.md).

Temporal's history stays the source of truth; the mirror is for dashboards and
queries. Writes are idempotent upserts keyed by deterministic uuids, made from
a background thread with a local spool, so a MongoDB outage delays the mirror
but never fails or blocks a workflow.

- ``MirrorWriter(uri, database)``: the MirrorSink the Mirror activity writes to.
- ``MirrorTaskListener(writer, registration)``: handler tasks and logs.
- ``ServerRegistration(writer, queues=..., handlers=...)``: the worker's servers document.
- ``MongoProgramStore(uri, database)`` / ``publish_to_mongo``: programs in flows/workflows.
- ``MirrorSession(uri, ...)``: writer + listener + registration for one worker process.
"""

from .documents import MirrorOp, RecordError, build_ops
from .listener import MirrorTaskListener
from .program_store import MongoProgramStore, publish_to_mongo
from .schema import COLLECTIONS, DEFAULT_DATABASE, INDEXES, ensure_indexes
from .servers import ServerRegistration
from .session import MirrorSession
from .writer import MirrorWriter, database_from_uri

__all__ = [
    "COLLECTIONS",
    "DEFAULT_DATABASE",
    "INDEXES",
    "MirrorOp",
    "MirrorSession",
    "MirrorTaskListener",
    "MirrorWriter",
    "MongoProgramStore",
    "RecordError",
    "ServerRegistration",
    "build_ops",
    "database_from_uri",
    "ensure_indexes",
    "publish_to_mongo",
]
