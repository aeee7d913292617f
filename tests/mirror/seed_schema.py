"""The original runtime's schema (docs/mirror.md) transcribed for tests: every collection's fields and types, checked document by document.

``check_documents(db)`` asserts that each document of each mirror collection
has every field of the original schema's entity with the original schema's type (ints for the
millisecond timestamps, the documented state vocabularies, nested shapes);
``check_references(db)`` that the ids between documents resolve and nothing
is duplicated; ``check_indexes(db)`` that the indexes are exactly the original schema's.
Written independently of the mirror's own schema module, so a drift in
either shows up here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.mirror.test_schema import EXPECTED, _actual

Check = Callable[[Any], bool]


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_ms(v: Any) -> bool:
    """A millisecond timestamp (after 2001), as the original schema stores every time."""
    return is_int(v) and v > 1_000_000_000_000


def is_ms_or_zero(v: Any) -> bool:
    return v == 0 or is_ms(v)


def is_dict(v: Any) -> bool:
    return isinstance(v, dict)


def is_bool(v: Any) -> bool:
    return isinstance(v, bool)


def opt(check: Check) -> Check:
    return lambda v: v is None or check(v)


def one_of(*values: Any) -> Check:
    return lambda v: v in values


def list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def shaped(**fields: Check) -> Check:
    """A nested document holding at least these fields with these types."""
    return lambda v: isinstance(v, dict) and all(k in v and c(v[k]) for k, c in fields.items())


PARAMETER = shaped(name=is_str)
WORKFLOW_DEFINITION = shaped(uuid=is_str, name=is_str, namespace_id=is_str, facet_id=is_str, flow_id=is_str,
                             starting_step=is_str, version=is_str, metadata=opt(is_dict),
                             documentation=opt(is_str), date=is_int)  # fmt: skip

FIELDS: dict[str, dict[str, Check]] = {
    "flows": {
        "uuid": is_str, "name": shaped(name=is_str, path=is_str, uuid=is_str),
        "namespaces": list_of(is_dict), "facets": list_of(is_dict), "workflows": list_of(WORKFLOW_DEFINITION),
        "mixins": list_of(is_dict), "blocks": list_of(is_dict), "statements": list_of(is_dict),
        "arguments": list_of(is_dict), "references": list_of(is_dict), "script_code": list_of(is_dict),
        "file_artifacts": list_of(is_dict), "jar_artifacts": list_of(is_dict), "resources": list_of(is_dict),
        "text_sources": list_of(is_dict), "inline": opt(is_dict), "classification": opt(is_dict),
        "publisher": opt(is_dict), "ownership": opt(is_dict),
        "compiled_sources": list_of(shaped(name=is_str, language=is_str, content=is_str)),
    },
    "workflows": {
        "uuid": is_str, "name": is_str, "namespace_id": is_str, "facet_id": is_str, "flow_id": is_str,
        "starting_step": is_str, "version": is_str, "metadata": opt(is_dict), "documentation": opt(is_str),
        "date": is_ms,
    },
    "runners": {
        "uuid": is_str, "workflow_id": is_str, "workflow": WORKFLOW_DEFINITION, "parameters": list_of(PARAMETER),
        "step_id": opt(is_str), "user": opt(is_dict), "start_time": is_ms, "end_time": is_ms_or_zero,
        "duration": is_int, "retain": is_int,
        "state": one_of("created", "running", "completed", "failed", "paused", "cancelled", "unknown"),
        "compiled_ast": opt(is_dict), "workflow_ast": opt(is_dict),
    },
    "steps": {
        "uuid": is_str, "object_type": one_of("VariableAssignment", "Facet", "AndThen", "AndMap", "AndMatch",
                                              "YieldAssignment", "SchemaInstantiation"),
        "runner_id": is_str, "workflow_id": is_str, "statement_id": opt(is_str), "container_type": opt(is_str),
        "container_id": opt(is_str), "root_id": opt(is_str), "block_id": opt(is_str),
        "timestamp": opt(shaped(created=is_ms, updated=is_ms)), "facets": opt(is_dict),
        "flow_definition_id": opt(is_str), "flow_definition_json": opt(is_dict), "extra_data": opt(is_dict),
        "lock_status": one_of("", "locked"), "is_starting_step": is_bool, "parameters": list_of(PARAMETER),
        "state": one_of("created", "running", "completed", "failed", "caught"), "error": opt(is_dict),
    },
    "tasks": {
        "uuid": is_str, "name": is_str, "runner_id": is_str, "workflow_id": is_str, "flow_id": is_str,
        "step_id": is_str, "state": one_of("pending", "running", "completed", "failed", "ignored", "canceled"),
        "created": is_ms, "updated": is_ms, "error": opt(is_dict), "task_list_name": is_str,
        "data_type": is_str, "data": opt(is_dict),
    },
    "logs": {
        "uuid": is_str, "order": is_int, "runner_id": is_str, "step_id": opt(is_str), "object_id": is_str,
        "object_type": is_str, "note_originator": one_of("workflow", "agent"),
        "note_type": one_of("error", "info", "warning"), "note_importance": one_of(1, 5, 10), "message": is_str,
        "state": is_str, "line": is_int, "file": is_str, "details": is_dict, "time": is_ms,
    },
    "servers": {
        "uuid": is_str, "server_group": is_str, "service_name": is_str, "server_name": is_str,
        "server_ips": list_of(is_str), "start_time": is_ms, "ping_time": is_ms, "topics": list_of(is_str),
        "handlers": list_of(is_str), "handled": list_of(shaped(handler=is_str, handled=is_int, not_handled=is_int)),
        "state": one_of("startup", "running", "shutdown", "error"), "manager": is_str, "error": opt(is_dict),
    },
}  # fmt: skip


def check_documents(db: Any) -> dict[str, int]:
    """Every document has every seed field with the original schema's type, and ``_id`` = ``uuid``; returns counts."""
    problems: list[str] = []
    counts: dict[str, int] = {}
    for collection, fields in FIELDS.items():
        docs = list(db[collection].find({}))
        counts[collection] = len(docs)
        for doc in docs:
            if doc.get("_id") != doc.get("uuid"):
                problems.append(f"{collection} {doc.get('_id')}: uuid {doc.get('uuid')!r} is not the _id")
            for name, check in fields.items():
                if name not in doc:
                    problems.append(f"{collection} {doc['_id']}: no field {name}")
                elif not check(doc[name]):
                    problems.append(f"{collection} {doc['_id']}: {name} = {doc[name]!r:.120}")
    assert not problems, "\n".join(problems[:40])
    return counts


def check_indexes(db: Any) -> None:
    assert _actual(db) == EXPECTED


def check_references(db: Any) -> None:
    """Ids between documents resolve; one step per path and one task per step in each run."""
    runners = {d["uuid"]: d for d in db.runners.find({})}
    steps = {d["uuid"]: d for d in db.steps.find({})}
    tasks = list(db.tasks.find({}))
    flows = {d["uuid"] for d in db.flows.find({}, {"uuid": 1})}
    for runner in runners.values():
        assert runner["flow_id"] in flows, runner
        assert runner["workflow"]["flow_id"] == runner["flow_id"]
    for step in steps.values():
        assert step["runner_id"] in runners, step
        assert step["container_id"] in steps or step["container_id"] in runners, step
        for key in ("block_id", "root_id"):
            assert step[key] is None or step[key] in steps, (key, step)
        assert step["flow_id"] == runners[step["runner_id"]]["flow_id"], step
        assert step["timestamp"]["created"] <= step["timestamp"]["updated"]
    paths = Counter((s["runner_id"], s["path"]) for s in steps.values())
    assert max(paths.values(), default=1) == 1, [p for p, n in paths.items() if n > 1]
    per_step = Counter(t["step_id"] for t in tasks)
    assert max(per_step.values(), default=1) == 1, [s for s, n in per_step.items() if n > 1]
    for task in tasks:
        assert task["runner_id"] in runners, task
        assert task["step_id"] in steps, task
        assert task["flow_id"] == runners[task["runner_id"]]["flow_id"], task
        assert steps[task["step_id"]]["facets"]["name"] == task["name"]
        assert task["created"] <= task["updated"]
    known = set(steps) | set(runners) | {t["uuid"] for t in tasks}
    for log in db.logs.find({}):
        assert log["runner_id"] in runners, log
        assert log["object_id"] in known, log
        assert log["step_id"] is None or log["step_id"] in steps, log
