"""The mirror creates exactly the indexes of the original runtime's schema, idempotently, and they bite."""

from __future__ import annotations

import pymongo
import pytest

from interpreter.activities.mirror import ensure_indexes

# The original schema's indexes: (collection, name, keys, unique, partial filter).
EXPECTED = {
    ("flows", "flow_uuid_index", ("uuid",), True, None),
    ("flows", "flow_path_index", ("name.path",), False, None),
    ("flows", "flow_name_index", ("name.name",), False, None),
    ("flows", "flow_name_id_index", ("name.uuid",), False, None),
    ("workflows", "workflow_uuid_index", ("uuid",), True, None),
    ("workflows", "workflow_name_index", ("name",), False, None),
    ("workflows", "workflow_flow_id_index", ("flow_id",), False, None),
    ("runners", "runner_uuid_index", ("uuid",), True, None),
    ("runners", "runner_workflow_id_index", ("workflow_id",), False, None),
    ("runners", "runner_flow_id_index", ("flow_id",), False, None),
    ("runners", "runner_state_index", ("state",), False, None),
    ("steps", "step_uuid_index", ("uuid",), True, None),
    ("steps", "step_workflow_id_index", ("workflow_id",), False, None),
    ("steps", "step_flow_id_index", ("flow_id",), False, None),
    ("steps", "step_state_index", ("state",), False, None),
    ("tasks", "task_uuid_index", ("uuid",), True, None),
    ("tasks", "task_runner_id_index", ("runner_id",), False, None),
    ("tasks", "task_step_id_index", ("step_id",), False, None),
    ("tasks", "task_list_name_index", ("task_list_name",), False, None),
    ("tasks", "task_state_index", ("state",), False, None),
    ("tasks", "task_step_id_running_unique_index", ("step_id",), True, (("state", "running"),)),
    ("logs", "log_uuid_index", ("uuid",), True, None),
    ("logs", "log_runner_id_index", ("runner_id",), False, None),
    ("logs", "log_object_id_index", ("object_id",), False, None),
    ("servers", "server_uuid_index", ("uuid",), True, None),
}


def _actual(db) -> set[tuple]:
    actual = set()
    for collection in db.list_collection_names():
        for index in db[collection].list_indexes():
            if index["name"] == "_id_":
                continue
            partial = index.get("partialFilterExpression")
            actual.add((
                collection,
                index["name"],
                tuple(key for key, _ in index["key"].items()),
                bool(index.get("unique", False)),
                tuple(dict(partial).items()) if partial else None,
            ))  # fmt: skip
            assert all(direction == 1 for direction in index["key"].values())
    return actual


def test_ensure_indexes_creates_exactly_the_seed_indexes(mongo_db) -> None:
    names = ensure_indexes(mongo_db)
    assert sorted(names) == sorted(name for _, name, *_ in EXPECTED)
    assert _actual(mongo_db) == EXPECTED


def test_ensure_indexes_is_idempotent(mongo_db) -> None:
    ensure_indexes(mongo_db)
    ensure_indexes(mongo_db)
    assert _actual(mongo_db) == EXPECTED


def test_partial_unique_index_allows_one_running_task_per_step(mongo_db) -> None:
    ensure_indexes(mongo_db)
    tasks = mongo_db["tasks"]
    tasks.insert_one({"_id": "t1", "uuid": "t1", "step_id": "s", "state": "running"})
    tasks.insert_one({"_id": "t2", "uuid": "t2", "step_id": "s", "state": "completed"})
    tasks.insert_one({"_id": "t3", "uuid": "t3", "step_id": "s", "state": "failed"})
    with pytest.raises(pymongo.errors.DuplicateKeyError):
        tasks.insert_one({"_id": "t4", "uuid": "t4", "step_id": "s", "state": "running"})
    with pytest.raises(pymongo.errors.DuplicateKeyError):
        tasks.insert_one({"_id": "t5", "uuid": "t1", "step_id": "other", "state": "completed"})
