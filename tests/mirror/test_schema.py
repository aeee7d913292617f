"""docs/mirror.md's schema tables are the code's: the indexes ensure_indexes creates, the lifecycle
mapping of ``schema.step_state``, and field types every check knows; the indexes bite."""

from __future__ import annotations

import pymongo
import pytest

from interpreter.activities.mirror import INDEXES, ensure_indexes, schema
from tests.mirror.doc_schema import documented_fields, documented_indexes, documented_lifecycles
from tests.mirror.schema_checks import LABELS, WHEN_SET, actual_indexes


def _code_indexes() -> set[tuple]:
    return {(s.collection, s.name, s.keys, s.unique, tuple(s.partial.items()) if s.partial else None) for s in INDEXES}


def test_the_documented_indexes_are_the_codes() -> None:
    documented = documented_indexes()
    assert len(documented) == 29
    assert documented == _code_indexes()


def test_every_collection_and_field_type_is_documented_and_checkable() -> None:
    fields = documented_fields()
    assert tuple(fields) == schema.COLLECTIONS
    assert {c for c, *_ in documented_indexes()} == set(schema.COLLECTIONS)
    unknown = {(c, f, t) for c, table in fields.items() for f, t in table.items() if t.removesuffix(WHEN_SET) not in LABELS}
    assert not unknown
    # the documented schema's own fields are all there, beside the runtime's and the mirror's
    assert {"uuid", "workflow_id", "workflow", "parameters", "step_id", "user", "start_time", "end_time", "duration",
            "retain", "state", "compiled_ast", "workflow_ast"} <= set(fields["runners"])  # fmt: skip
    assert {"facet_name", "statement_name", "attributes", "start_time", "last_modified"} <= set(fields["steps"])
    assert {"server_id"} <= set(fields["tasks"])


def test_the_lifecycle_table_is_step_state() -> None:
    table = documented_lifecycles()
    assert set(table) == set(schema.LIFECYCLES) == set(schema.STEP_RANK)
    for lifecycle, (step_state, block_state) in table.items():
        assert schema.step_state(lifecycle, "VariableAssignment") == step_state
        assert schema.step_state(lifecycle, "Workflow") == step_state
        if block_state is not None:
            assert schema.step_state(lifecycle, "AndThen") == block_state
        assert {step_state, block_state or step_state} <= set(schema.STEP_VOCABULARY)


def test_the_vocabulary_is_the_original_runtimes() -> None:
    vocabulary = set(schema.STEP_VOCABULARY)
    assert len(vocabulary) == len(schema.STEP_VOCABULARY) == 27
    for phase in ("facet.initialization", "facet.scripts", "statement.scripts", "mixin.capture", "statement.capture"):
        assert {f"state.{phase}.Begin", f"state.{phase}.End"} <= vocabulary
    for phase in ("mixin.blocks", "statement.blocks", "block.execution", "statement.catch"):
        assert {f"state.{phase}.{part}" for part in ("Begin", "Continue", "End")} <= vocabulary
    assert {"state.statement.Created", "state.EventTransmit", "state.statement.End", "state.statement.Complete",
            "state.statement.Error"} <= vocabulary  # fmt: skip


def test_ensure_indexes_creates_exactly_the_documented_indexes(mongo_db) -> None:
    names = ensure_indexes(mongo_db)
    assert sorted(names) == sorted(name for _, name, *_ in documented_indexes())
    assert actual_indexes(mongo_db) == documented_indexes()


def test_ensure_indexes_is_idempotent(mongo_db) -> None:
    ensure_indexes(mongo_db)
    ensure_indexes(mongo_db)
    assert actual_indexes(mongo_db) == documented_indexes()


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
