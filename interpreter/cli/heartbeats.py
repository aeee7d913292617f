"""Handler progress for ``ffl status``: the heartbeat details of a run's pending activities.

A workflow cannot see its activities' heartbeats, so the ``steps`` query does
not carry progress; Temporal's describe call does (pending activities, by
activity id = step path). A handler's ``_task_heartbeat(progress_pct,
progress_message)`` heartbeats ``{"progress_pct", "progress_message"}``.
"""

from __future__ import annotations

from typing import Any


async def pending_progress(description: Any) -> dict[str, dict[str, Any]]:
    """Step path → ``{"pct", "message"}`` of every pending activity whose last heartbeat reported progress."""
    raw = getattr(description, "raw_description", None)
    converter = getattr(description, "data_converter", None)
    if raw is None or converter is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for pending in raw.pending_activities:
        payloads = list(pending.heartbeat_details.payloads)
        if not payloads:
            continue
        try:
            values = await converter.decode(payloads)
        except Exception:  # noqa: BLE001 - a detail this converter cannot read is no progress
            continue
        last = values[-1] if values else None
        if isinstance(last, dict) and ("progress_pct" in last or "progress_message" in last):
            found[pending.activity_id] = {"pct": last.get("progress_pct"), "message": last.get("progress_message")}
    return found
