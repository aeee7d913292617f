"""Mocked facets: what a test says a facet answers, turned into the plain handler the run calls.

A mock is a function of the step's arguments, a dict of returns (every
call), a list (one entry per call, in order: a dict, an exception or a
function), an exception (raised by every call: a ``catch`` or a retry policy
meets it), or ``REAL``: the facet's real handler answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from interpreter.activities.handlers import HandlerRegistry

REAL = "real"
"""A mock that is no mock: the facet's handler from the tester's handler files answers."""

Handler = Callable[[dict[str, Any]], Any]


class MockError(BaseException):
    """A test's mocks are wrong (a facet is not mocked, a list ran out): the test errs and the run stops.

    Not an ``Exception``, so no handler wrapper turns it into a step's failure that a ``catch`` would take
    for the behaviour under test."""


@cache
def error_class(error_type: str) -> type[Exception]:
    """An exception class named ``error_type``: a handler's error type is its class name, in memory and on a
    worker alike, so a test file's ``raises: {type: Timeout}`` meets ``catch`` and ``ffl.Retry`` as one would."""
    return type(error_type, (Exception,), {"__module__": __name__})


def mocked_failure(error_type: str, message: str) -> Exception:
    return error_class(error_type)(message)


def handler_of(facet: str, mock: Any, registry: HandlerRegistry | None) -> Handler:
    if isinstance(mock, str) and mock == REAL:
        registration = registry.registration(facet) if registry is not None else None
        if registration is None:
            raise MockError(f"{facet} is marked real, but no handler file registers it")
        return registration.fn
    if isinstance(mock, BaseException):
        return _raising(mock)
    if callable(mock):
        return mock
    if isinstance(mock, Mapping):
        returns = dict(mock)
        return lambda args: dict(returns)
    if isinstance(mock, Sequence) and not isinstance(mock, str):
        return _sequence(facet, list(mock))
    raise MockError(f"mock of {facet} must be a function, a dict of returns, a list, an exception or REAL, "
                    f"not {type(mock).__name__}")


def _raising(exc: BaseException) -> Handler:
    def fail(args: dict[str, Any]) -> Any:
        raise exc

    return fail


def _sequence(facet: str, answers: list[Any]) -> Handler:
    """One answer per call; a call after the last is a mistake of the test, never a silent repeat."""
    position = iter(range(len(answers) + 1))

    def answer(args: dict[str, Any]) -> Any:
        index = next(position)
        if index >= len(answers):
            raise MockError(f"{facet} was called {index + 1} times, but its mock lists {len(answers)} answers")
        return handler_of(facet, answers[index], None)(args)

    return answer


def unmocked(facet: str, mocked: Sequence[str]) -> Handler:
    def refuse(args: dict[str, Any]) -> Any:
        raise MockError(f"{facet} is not mocked (mocked: {', '.join(sorted(mocked)) or 'none'}); "
                        "mock it, or mark it REAL to call its handler")

    return refuse
