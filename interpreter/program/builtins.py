"""The reserved namespace ``ffl``: names of the built-in facets, shared by compiler, workflow and docs.

Two kinds of built-ins, both declared by the compiler's prelude so they are
validated like any facet:

- **steps** the workflow performs itself, never a handler: durable timers
  (``ffl.Sleep``, ``ffl.WaitUntil``) and waits for an outside payload
  (``ffl.WaitForSignal``). A call of one is compiled with ``kind == "builtin"``.
- **policies**, written as mixins on an event facet or on one call of it:
  ``ffl.Retry``, ``ffl.Timeout``, ``ffl.Queue``. The compiler turns them into
  the declaration's or call's ``Policy`` (activity options) and removes them
  from its mixins, so they never reach a handler.
"""

from __future__ import annotations

NAMESPACE = "ffl"

SLEEP = "ffl.Sleep"
WAIT_UNTIL = "ffl.WaitUntil"
WAIT_FOR_SIGNAL = "ffl.WaitForSignal"
STEPS = (SLEEP, WAIT_UNTIL, WAIT_FOR_SIGNAL)

RETRY = "ffl.Retry"
TIMEOUT = "ffl.Timeout"
QUEUE = "ffl.Queue"

POLICY_FIELDS: dict[str, dict[str, str]] = {
    RETRY: {
        "max_attempts": "maximum_attempts",
        "initial_seconds": "initial_interval_seconds",
        "backoff": "backoff_coefficient",
        "max_seconds": "maximum_interval_seconds",
        "non_retryable": "non_retryable_error_types",
    },
    TIMEOUT: {
        "start_to_close_seconds": "start_to_close_seconds",
        "heartbeat_seconds": "heartbeat_seconds",
        "schedule_to_close_seconds": "schedule_to_close_seconds",
    },
    QUEUE: {"name": "queue"},
}
"""Each policy's FFL arguments → the ``Policy`` (and RetryConfig) field they set."""

POLICIES = tuple(POLICY_FIELDS)


def is_builtin(qname: str | None) -> bool:
    """Whether ``qname`` names a declaration of the reserved namespace."""
    return bool(qname) and (qname == NAMESPACE or qname.startswith(NAMESPACE + "."))  # type: ignore[union-attr]
