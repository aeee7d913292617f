"""The prelude: FFL declarations of the reserved namespace ``ffl``, compiled into every program's symbol table.

Declaring the built-ins in FFL lets the ordinary checks validate their calls
(arguments, did-you-mean, returns a step may read). They are visible by
their qualified name everywhere (``ffl.Sleep``) and by short name where a
namespace says ``uses ffl``; they never resolve as a program-wide short name,
so a program's own ``Timeout`` mixin keeps meaning what it did. Only the
compiler reads these declarations: a compiled program holds none of them
(built-in calls are marked ``kind == "builtin"``, policies become ``Policy``).

Every optional argument defaults to null, meaning "not given": a policy
argument left out keeps the worker's configuration.
"""

from __future__ import annotations

from ..program.model import SourceFile

PRELUDE_PATH = "<ffl>"

PRELUDE_SOURCE = """\
namespace ffl {
    /** Wait `seconds` on a durable timer: no worker holds it, it survives worker and server restarts. */
    event facet Sleep(seconds: Double)

    /** Wait until `time`, an ISO-8601 date-time (UTC when it has no offset); a time past goes on at once. */
    event facet WaitUntil(time: String)

    /** Wait for the signal or update `name` and return its payload; after `timeout_seconds`, timed_out. */
    event facet WaitForSignal(name: String, timeout_seconds: Double = null) => (payload: Json, timed_out: Boolean)

    /** Retry policy of an event facet's handler; an argument left out keeps the worker's configuration. */
    facet Retry(max_attempts: Long = null, initial_seconds: Double = null, backoff: Double = null,
                max_seconds: Double = null, non_retryable: [String] = null)

    /** Timeouts of one attempt (start-to-close), of silence between heartbeats (0: none) and of all attempts. */
    facet Timeout(start_to_close_seconds: Double = null, heartbeat_seconds: Double = null,
                  schedule_to_close_seconds: Double = null)

    /** The task queue an event facet's handler is served on. */
    facet Queue(name: String)
}
"""


def parse_prelude() -> SourceFile:
    """A fresh parse (the compiler fills resolved fields in place, so each compile gets its own)."""
    from .parser import parse_source

    return parse_source(PRELUDE_SOURCE, PRELUDE_PATH)
