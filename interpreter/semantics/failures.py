"""How a step fails: ``StepFailure`` names the innermost failing step, ``Skipped`` a step that never started.

Both are raised where the failure happens; the message is phrased there
(``StepFailure.__str__``) and only the enclosing composed steps it also
fails are added on the way up, so the run's failure reads "step 'b0/s'
(shop.Charge) failed: ValueError: card declined / in step 'b0/checkout' …".
"""

from __future__ import annotations

import itertools

_failure_seq = itertools.count()


class StepFailure(Exception):
    """A step failed and nothing caught it.

    ``seq`` orders failures by when they happened (deterministic under
    Temporal), so the first real failure is the one reported.
    """

    def __init__(self, path: str, facet: str, cause: str, error_type: str):
        self.path, self.facet, self.cause, self.error_type = path, facet, cause, error_type
        self.seq = next(_failure_seq)
        self.within: list[tuple[str, str]] = []  # enclosing steps it failed, innermost first
        super().__init__(path, facet, cause, error_type)

    def failed_within(self, path: str, facet: str) -> None:
        """Record an enclosing (composed) step this failure also fails, so the message names it."""
        if path != self.path and (path, facet) not in self.within:
            self.within.append((path, facet))

    def __str__(self) -> str:
        where = f"step '{self.path}' ({self.facet})" if self.path else f"workflow '{self.facet}'"  # its own outputs
        text = f"{where} failed: {self.error_type}: {self.cause}"
        for path, facet in self.within:
            text += f"\n  in step '{path}' ({facet})"
        return text


class Skipped(Exception):
    """A step was not started because a step it needs failed, or its scope failed."""


class InvalidInput(Exception):
    """A run's inputs do not fit its workflow's parameters: the run fails before any step starts."""


def first_failure(results: list[object]) -> BaseException | None:
    """The failure to report among gathered results: earliest StepFailure, else any other error."""
    failures = [r for r in results if isinstance(r, StepFailure)]
    if failures:
        return min(failures, key=lambda f: f.seq)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, Skipped):
            return result
    for result in results:
        if isinstance(result, Skipped):
            return result
    return None
