"""Size limits of values crossing the workflow's boundaries.

Temporal refuses a payload over 2 MB. Runs started before values went by
reference (no SCALE_PATCH) keep that limit. Since then every client and
worker of the project stores a payload over 128 KB in the value store and
sends a reference (activities/value_codec.py), so a value may be far larger;
``RuntimeConfig.max_value_bytes`` (64 MB) still bounds it, because every
worker that reads it holds it in memory.
"""

from __future__ import annotations

import json
from typing import Any

PAYLOAD_LIMIT = 2 * 1024 * 1024
"""Bytes Temporal accepts in one payload (SDK and server default error limit)."""

_COMPACT = json.JSONEncoder(default=str, separators=(",", ":"))
"""One encoder for every size check: ``json.dumps`` with options builds a new one per call (each step's)."""


def oversize(value: Any, limit: int = PAYLOAD_LIMIT) -> int | None:
    """The JSON size of ``value`` when it is over ``limit``, else None."""
    size = len(_COMPACT.encode(value))
    return size if size > limit else None


def too_large(what: str, size: int, limit: int = PAYLOAD_LIMIT) -> str:
    if limit == PAYLOAD_LIMIT:
        return f"{what} are {size} bytes of JSON; Temporal accepts at most {limit} bytes per payload"
    return f"{what} are {size} bytes of JSON; a value may have at most {limit} bytes (stored by reference)"
