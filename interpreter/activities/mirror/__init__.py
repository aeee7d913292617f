"""The MongoDB mirror: every run's runners, steps, tasks and logs in the database.md schema.

Temporal's history stays the source of truth; the mirror is for dashboards and
queries. Writes are idempotent upserts keyed by deterministic uuids, made from
a background thread with a local spool, so a MongoDB outage delays the mirror
but never fails or blocks a workflow.
"""

from .documents import MirrorOp, RecordError, build_ops
from .schema import COLLECTIONS, DEFAULT_DATABASE, INDEXES, ensure_indexes
from .writer import MirrorWriter, database_from_uri

__all__ = [
    "COLLECTIONS",
    "DEFAULT_DATABASE",
    "INDEXES",
    "MirrorOp",
    "MirrorWriter",
    "RecordError",
    "build_ops",
    "database_from_uri",
    "ensure_indexes",
]
