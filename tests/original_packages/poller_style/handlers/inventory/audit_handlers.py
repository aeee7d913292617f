"""The audit handler: a long-running step that reports its progress while it waits."""

import os
import time

AUDIT_QUALIFIED = "inventory.Audit"


def handle_audit(payload: dict) -> dict:
    gate = payload["gate"]
    heartbeat = payload["_task_heartbeat"]
    heartbeat(progress_pct=40, progress_message="waiting for the gate")
    with open(gate + ".started", "w") as marker:
        marker.write(payload["_task_uuid"])
    deadline = time.monotonic() + 60
    while not os.path.exists(gate + ".go") and time.monotonic() < deadline:
        time.sleep(0.1)
    heartbeat(100, "gate open")
    return {"audited": os.path.exists(gate + ".go")}


def register_audit_handlers(poller) -> None:
    poller.register(AUDIT_QUALIFIED, handle_audit)
