"""Failures as a user reads them: an interpreter-made error carries its message, not the interpreter's stack.

A run's failure (``step 's' (calc.Add) failed: ValueError: …``) is an
ApplicationError raised by the interpreter workflow; the SDK would record the
interpreter's Python frames as its stack trace, which the Web UI prints under
the message. Those frames say nothing about the program: the handler's own
frames are in the failed activity's event. Errors raised by handlers (encoded
in the activity worker) and the workflow's own bugs (non-determinism, any
other exception type) keep their stack traces.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.api.failure.v1 import Failure
from temporalio.converter import DefaultFailureConverter, PayloadConverter
from temporalio.exceptions import ApplicationError


class UserFacingFailures(DefaultFailureConverter):
    """The default conversion, without the stack trace of ApplicationErrors raised in workflow code."""

    def to_failure(self, exception: BaseException, payload_converter: PayloadConverter, failure: Failure) -> None:
        super().to_failure(exception, payload_converter, failure)
        if isinstance(exception, ApplicationError) and workflow.in_workflow():
            failure.stack_trace = ""
