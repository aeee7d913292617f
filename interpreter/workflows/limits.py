"""Temporal's payload limit, checked before the workflow makes a payload.

A workflow task whose commands carry a payload over the limit is refused by
the SDK and retried forever: the run would hang. Checking first turns an
oversized step argument or workflow result into an ordinary failure that
names it (a step's can be caught).
"""

from __future__ import annotations

import json
from typing import Any

PAYLOAD_LIMIT = 2 * 1024 * 1024
"""Bytes Temporal accepts in one payload (SDK and server default error limit)."""


def oversize(value: Any, limit: int = PAYLOAD_LIMIT) -> int | None:
    """The JSON size of ``value`` when it is over ``limit``, else None."""
    size = len(json.dumps(value, default=str, separators=(",", ":")))
    return size if size > limit else None


def too_large(what: str, size: int, limit: int = PAYLOAD_LIMIT) -> str:
    return f"{what} are {size} bytes of JSON; Temporal accepts at most {limit} bytes per payload"
