"""Fixtures for the mirror tests: a database on the session's secantusdb, writers with private spools."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pymongo
import pytest

from interpreter.activities.mirror import MirrorWriter


@pytest.fixture
def mongo_uri(mongo_service) -> str:
    return mongo_service.extra["uri"]


@pytest.fixture
def mongo_db(mongo_uri, mongo_db_name) -> Iterator[object]:
    client = pymongo.MongoClient(mongo_uri, serverSelectionTimeoutMS=5000)
    yield client[mongo_db_name]
    client.drop_database(mongo_db_name)
    client.close()


@pytest.fixture
def make_writer(tmp_path) -> Iterator[Callable[..., MirrorWriter]]:
    """Writers whose spools live in this test's tmp dir; all closed at the end."""
    writers: list[MirrorWriter] = []

    def make(uri: str, database: str, **kwargs) -> MirrorWriter:
        kwargs.setdefault("spool_dir", tmp_path / "spool")
        writer = MirrorWriter(uri, database, **kwargs)
        writers.append(writer)
        return writer

    yield make
    for writer in writers:
        writer.close(timeout=2)
