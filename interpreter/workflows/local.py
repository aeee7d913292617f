"""Handlers as local activities: where the interpreter worker serves a facet in its own process.

A chain of steps pays one server round trip per activity (schedule, poll,
complete, next workflow task). When the interpreter worker itself serves a
facet's handler (``ffl run``, or a worker given both the ``ffl`` queue and
handlers, which pins them in ``RuntimeConfig.local_facets``), the step runs
as a local activity of that worker instead: its result is recorded in the
run's history as a marker when the workflow task completes, and the next
step starts at once. ``RuntimeConfig.remote_facets`` opts a facet out
(handlers that run long, heartbeat, or must run on another machine), and so
does a policy of FFL that sets a heartbeat timeout or a queue: a local
activity cannot heartbeat, complete later (``CompleteLater``) or run on
another queue.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, FailureError

with workflow.unsafe.imports_passed_through():
    from interpreter.program.config import RuntimeConfig
    from interpreter.program.model import Call, FacetDecl

_KEPT = ("start_to_close_timeout", "schedule_to_close_timeout", "retry_policy", "cancellation_type")
"""Options of a handler's activity that a local activity keeps (queue, heartbeat and schedule-to-start do not apply)."""


def runs_locally(config: RuntimeConfig, decl: FacetDecl, call: Call | None) -> bool:
    """Whether this call of ``decl`` runs as a local activity: served in-process, and no policy of FFL asks for
    what only a remote activity has (a heartbeat timeout of its own, e.g. 0 for CompleteLater, or a queue)."""
    if not config.runs_locally(decl.qname):
        return False
    policies = [policy for policy in (decl.policy, call.policy if call is not None else None) if policy is not None]
    return not any(policy.heartbeat_seconds is not None or policy.queue for policy in policies)


def local_options(options: workflow.ActivityConfig) -> workflow.LocalActivityConfig:
    """The local-activity options of a handler, from the activity options built once for its facet."""
    local = workflow.LocalActivityConfig()
    for key in _KEPT:
        value = options.get(key)
        if value is not None:
            local[key] = value  # type: ignore[literal-required]
    return local


def as_activity_error(err: FailureError, facet: str, path: str) -> ActivityError:
    """A local activity's failure as the ActivityError a remote one raises (raised ``from`` the handler's error).

    The SDK raises a failed local activity's error itself, not wrapped; the
    interpreter reads every handler failure one way.
    """
    return ActivityError(f"local activity {facet} failed", scheduled_event_id=0, started_event_id=0, identity="",
                         activity_type=facet, activity_id=path, retry_state=None)
