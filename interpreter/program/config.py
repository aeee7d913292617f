"""Runtime configuration pinned in history together with the program.

The worker that serves LoadProgram is started with one RuntimeConfig; the
workflow reads it from that activity's result, so replays always see the
settings the run started with.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

DEFAULT_HEARTBEAT_SECONDS = 60.0
"""Heartbeat timeout of handler activities unless a configuration or ``ffl.Timeout`` says otherwise."""


class RetryConfig(BaseModel):
    """Retry policy and timeout of one kind of activity."""

    model_config = ConfigDict(extra="forbid")

    maximum_attempts: int = 3
    initial_interval_seconds: float = 1.0
    backoff_coefficient: float = 2.0
    maximum_interval_seconds: float = 30.0
    start_to_close_seconds: float = 300.0
    non_retryable_error_types: list[str] = Field(default_factory=list)
    schedule_to_start_seconds: float | None = Field(default=None, gt=0)
    """Fail the step when no worker has picked its task up within this time (None: wait for one)."""
    heartbeat_seconds: float | None = Field(default=DEFAULT_HEARTBEAT_SECONDS, gt=0)
    """Heartbeat timeout (None: none). A step whose worker dies is retried this soon instead of after
    ``start_to_close_seconds``: the handler activity heartbeats for its handler until the handler's own
    first ``payload["_task_heartbeat"]()``; from then on the handler must heartbeat at least this often,
    so a handler that stalls is retried too."""
    schedule_to_close_seconds: float | None = Field(default=None, gt=0)
    """Time all attempts of a step may take together, retries and waits between them included (None: no limit)."""


class ScriptConfig(BaseModel):
    """Limits of one FFL script, run in a process of its own on a worker started with ``--allow-scripts``."""

    model_config = ConfigDict(extra="forbid")

    timeout_seconds: float = Field(default=30.0, gt=0)
    memory_mb: int = Field(default=512, ge=64)
    processes: int = Field(default=4, ge=1, le=64)
    """Scripts one worker runs at once; more wait for a free slot."""


class RuntimeConfig(BaseModel):
    """Settings of a run that are not part of the program itself.

    ``queues`` maps a facet's qualified name, or a namespace prefix of it,
    to the task queue its handler listens on (the most specific key wins).

    How wide a run goes (docs/performance.md tells why, and what was measured):
    ``max_pending_activities`` bounds the handler and script activities one
    run has scheduled and not finished (Temporal refuses 2,000 per run);
    ``facet_max_pending`` bounds one facet's, e.g. a handler that calls a
    rate-limited service. Within those the run paces itself so that no
    workflow task receives more completions than the server buffers for it:
    each task starts at most ``max_starts_per_task`` activities, and the
    activities in flight are kept to about ``max_completions_per_second``
    times their observed duration, less while the run's tasks are crowded —
    a thousand one-second handlers run side by side, instant ones a few
    dozen at a time (more would only queue behind the handler worker).
    ``search_attributes`` says the namespace has FFL's search attributes
    registered (the interpreter worker checks at start), so runs upsert them;
    without it runs carry the same facts in their memo only.
    """

    model_config = ConfigDict(extra="forbid")

    retry: RetryConfig = Field(default_factory=RetryConfig)
    facet_retry: dict[str, RetryConfig] = Field(default_factory=dict)
    queues: dict[str, str] = Field(default_factory=dict)
    mirror: bool = False
    max_pending_activities: int = Field(default=1000, ge=1, le=1900)
    facet_max_pending: dict[str, PositiveInt] = Field(default_factory=dict)
    max_starts_per_task: int = Field(default=20, ge=1, le=1000)
    max_completions_per_second: float = Field(default=1000.0, gt=0)
    search_attributes: bool = False
    max_nesting_depth: int = Field(default=64, ge=1, le=1000)
    """Most steps nested inside other steps (composed-facet bodies, tails); a deeper one fails (runaway recursion)."""
    scripts: ScriptConfig = Field(default_factory=ScriptConfig)
    child_threshold: int = Field(default=1000, ge=1)
    """A foreach of more iterations than this runs them in child workflows (docs/performance.md)."""
    iterations_per_child: int = Field(default=1000, ge=1, le=1900)
    """Iterations one child workflow runs: its history holds their activities, so it stays small to replay."""
    children_in_flight: int = Field(default=4, ge=1, le=1000)
    """Child workflows of one foreach running at once; the next starts as one finishes."""
    continue_after_events: int = Field(default=8000, ge=100, le=40000)
    """History events after which a run stops admitting activities, lets those in flight finish and continues
    as new with a memo of the results so far (a history that long replays in about two seconds)."""
    type_checks: Literal["strict", "warn"] = "strict"
    """``warn``: a value that does not fit its declared type (a workflow input, a handler's return, a workflow's
    output) is passed on unchanged and reported as a warning instead of failing (docs/migrating.md)."""
    max_value_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    """Bytes of JSON one value (a step's arguments, a workflow's returns) may have; values over the codec's
    threshold travel by reference, but every worker that reads one holds it in memory."""
    local_facets: list[str] = Field(default_factory=list)
    """Facets whose handlers the interpreter worker serves in its own process (set by the worker, not by hand):
    they run as local activities, without a server round trip per step."""
    remote_facets: list[str] = Field(default_factory=list)
    """Facets never run as local activities even when served in-process: long handlers, ones that heartbeat."""

    def runs_locally(self, facet: str) -> bool:
        """Whether ``facet``'s handler runs as a local activity of the interpreter worker."""
        return facet in self.local_facets and facet not in self.remote_facets

    def retry_for(self, facet: str) -> RetryConfig:
        return self.facet_retry.get(facet, self.retry)

    def sets_start_to_close(self, facet: str) -> bool:
        """Whether ``facet_retry`` gives ``facet`` a start-to-close timeout of its own."""
        entry = self.facet_retry.get(facet)
        return entry is not None and "start_to_close_seconds" in entry.model_fields_set

    def with_handler_timeouts(self, timeouts: dict[str, float]) -> RuntimeConfig:
        """This config with each facet's registered timeout (seconds) as its start-to-close timeout.

        A ``facet_retry`` entry that sets ``start_to_close_seconds`` wins; one that
        does not keeps its other settings and takes the registered timeout.
        """
        chosen = {f: s for f, s in timeouts.items() if not self.sets_start_to_close(f)}
        if not chosen:
            return self
        facet_retry = dict(self.facet_retry)
        for facet, seconds in chosen.items():
            base = facet_retry.get(facet, self.retry)
            facet_retry[facet] = base.model_copy(update={"start_to_close_seconds": float(seconds)})
        return self.model_copy(update={"facet_retry": facet_retry})

    def queue_for(self, facet: str, default: str) -> str:
        """Queue override for ``facet`` (exact name, then longest namespace prefix), else ``default``."""
        if facet in self.queues:
            return self.queues[facet]
        parts = facet.split(".")
        for end in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:end])
            if prefix in self.queues:
                return self.queues[prefix]
        return default
