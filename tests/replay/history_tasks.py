"""What each workflow task of a recorded history did, for tests that check how a run cuts its tasks."""

from __future__ import annotations

import json

from temporalio.api.enums.v1 import EventType


def task_commands(history) -> list[list[str]]:
    """What each completed workflow task of ``history`` recorded: patch markers by patch id, local activities'
    markers by activity type, other markers by name, scheduled activities by type and id."""
    tasks: list[list[str]] = []
    for event in history.events:
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            tasks.append([])
        elif tasks and event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED:
            marker = event.marker_recorded_event_attributes
            if marker.marker_name == "core_local_activity":
                tasks[-1].append("local " + json.loads(marker.details["data"].payloads[0].data)["activity_type"])
            elif marker.marker_name == "core_patch":
                tasks[-1].append("patch " + json.loads(marker.details["patch-data"].payloads[0].data)["id"])
            else:
                tasks[-1].append(marker.marker_name)
        elif tasks and event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled = event.activity_task_scheduled_event_attributes
            tasks[-1].append(f"{scheduled.activity_type.name} {scheduled.activity_id}")
    return tasks
