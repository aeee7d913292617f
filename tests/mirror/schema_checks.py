"""Checks of mirrored documents against the schema docs/mirror.md documents, and of how they hang together.

``check_documents(db)`` asserts that each document of each collection has
every field of its collection's table with the table's type, where each type
label means the check in ``LABELS`` (shapes the original runtime builds its
entities from are checked exactly: no key its constructors would reject);
``check_indexes(db)`` that the indexes are exactly the documented ones;
``check_references(db)`` that the ids between documents resolve and nothing
is duplicated; ``check_tree(db)`` that every step is reachable from its
run's root, found the way the original dashboard builds its tree;
``check_states(db)`` that every state is of the original vocabulary and
follows the lifecycle table; ``check_order(db)`` that ``logs`` and
``step_logs`` orders are unique and agree with the steps' lifecycles.
Written independently of the mirror's own builders, so a drift in either
shows up here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

from interpreter.activities.mirror import schema
from tests.mirror.doc_schema import documented_fields, documented_indexes, documented_lifecycles

Check = Callable[[Any], bool]
WHEN_SET = " (when set)"


def is_str(v: Any) -> bool:
    return isinstance(v, str)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_ms(v: Any) -> bool:
    """A millisecond timestamp (after 2001), as the original schema stores every time."""
    return is_int(v) and v > 1_000_000_000_000


def is_dict(v: Any) -> bool:
    return isinstance(v, dict)


def opt(check: Check) -> Check:
    return lambda v: v is None or check(v)


def one_of(*values: Any) -> Check:
    return lambda v: v in values


def list_of(check: Check) -> Check:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


def keys(required: set[str], allowed: set[str], **fields: Check) -> Check:
    """A dict holding ``required``, nothing outside ``allowed`` (a dataclass built with ``**`` would reject it)."""
    allowed = allowed | required

    def check(v: Any) -> bool:
        return (isinstance(v, dict) and required <= set(v) <= allowed
                and all(c(v[k]) for k, c in fields.items() if k in v))  # fmt: skip

    return check


def shaped(**fields: Check) -> Check:
    """A nested document holding at least these fields with these types."""
    return lambda v: isinstance(v, dict) and all(k in v and c(v[k]) for k, c in fields.items())


PARAMETER = keys({"name", "value"}, {"type_hint"}, name=is_str, type_hint=is_str)
ATTRIBUTE = keys({"name", "value", "type_hint"}, set(), name=is_str, type_hint=is_str)
WORKFLOW_DEFINITION = shaped(uuid=is_str, name=is_str, namespace_id=is_str, facet_id=is_str, flow_id=is_str,
                             starting_step=is_str, version=is_str, metadata=opt(is_dict), documentation=opt(is_str),
                             date=is_int)  # fmt: skip
DECLARATION_TYPES = {"Namespace", "FacetDecl", "EventFacetDecl", "WorkflowDecl", "SchemaDecl", "ImplicitDecl"}


def _program_ast(v: Any) -> bool:
    def declarations(node: dict) -> bool:
        return all(isinstance(d, dict) and d.get("type") in DECLARATION_TYPES and is_str(d.get("name"))
                   and (d["type"] != "Namespace" or declarations(d)) for d in node.get("declarations", []))  # fmt: skip

    return isinstance(v, dict) and v.get("type") == "Program" and isinstance(v.get("declarations"), list) and \
        declarations(v)


def _attributes(v: Any) -> bool:
    return (isinstance(v, dict) and set(v) >= {"params", "returns"}
            and all(isinstance(v[k], dict) and all(ATTRIBUTE(a) and a["name"] == n for n, a in v[k].items())
                    for k in ("params", "returns")))  # fmt: skip


LABELS: dict[str, Check] = {
    "str": is_str,
    "str?": opt(is_str),
    "int": is_int,
    "ms": is_ms,
    "ms or 0": lambda v: v == 0 or is_ms(v),
    "bool": lambda v: isinstance(v, bool),
    "dict": is_dict,
    "dict?": opt(is_dict),
    "any": lambda v: True,
    "[dict]": list_of(is_dict),
    "[str]": list_of(is_str),
    "FlowIdentity": keys({"name", "path", "uuid"}, set(), name=is_str, path=is_str, uuid=is_str),
    "[NamespaceDefinition]": list_of(keys({"uuid", "name"}, {"path", "documentation"}, uuid=is_str, name=is_str)),
    "[FacetDefinition]": list_of(keys({"uuid", "name", "namespace_id"}, {"parameters", "return_type", "documentation"},
                                      uuid=is_str, name=is_str, namespace_id=is_str, parameters=list_of(PARAMETER),
                                      return_type=opt(is_str))),  # fmt: skip
    "[WorkflowDefinition]": list_of(WORKFLOW_DEFINITION),
    "WorkflowDefinition": WORKFLOW_DEFINITION,
    "[SourceText]": list_of(keys({"name", "content"}, {"language"}, name=is_str, content=is_str, language=is_str)),
    "Program AST": _program_ast,
    "[Parameter]": list_of(PARAMETER),
    "Error?": opt(shaped(message=is_str)),
    "Timestamps": shaped(created=is_ms, updated=is_ms),
    "Facets": shaped(name=opt(is_str), params=is_dict, returns=is_dict),
    "Attributes": _attributes,
    "[HandledCount]": list_of(keys({"handler"}, {"handled", "not_handled"}, handler=is_str, handled=is_int,
                                   not_handled=is_int)),  # fmt: skip
    "runner state": one_of(*schema.RUNNER_STATES),
    "task state": one_of(*schema.TASK_STATES),
    "server state": one_of(*schema.SERVER_STATES),
    "step state": one_of(*schema.STEP_VOCABULARY),
    "lifecycle": one_of(*schema.LIFECYCLES),
    "object type": one_of(*schema.STEP_OBJECT_TYPES),
    "note originator": one_of("workflow", "agent"),
    "note type": one_of("error", "info", "warning"),
    "importance": one_of(1, 5, 10),
    "source": one_of("framework", "handler"),
    "level": one_of("info", "warning", "error", "success"),
}


def check_documents(db: Any) -> dict[str, int]:
    """Every document has every documented field with its documented type, and ``_id`` = ``uuid``; returns counts."""
    problems: list[str] = []
    counts: dict[str, int] = {}
    for collection, fields in documented_fields().items():
        docs = list(db[collection].find({}))
        counts[collection] = len(docs)
        for doc in docs:
            if doc.get("_id") != doc.get("uuid"):
                problems.append(f"{collection} {doc.get('_id')}: uuid {doc.get('uuid')!r} is not the _id")
            for name, label in fields.items():
                optional = label.endswith(WHEN_SET)
                check = LABELS[label.removesuffix(WHEN_SET)]
                if name not in doc:
                    if not optional:
                        problems.append(f"{collection} {doc['_id']}: no field {name}")
                elif not check(doc[name]):
                    problems.append(f"{collection} {doc['_id']}: {name} = {doc[name]!r:.160} is not {label}")
    assert not problems, "\n".join(problems[:40])
    return counts


def actual_indexes(db: Any) -> set[tuple]:
    actual = set()
    for collection in db.list_collection_names():
        for index in db[collection].list_indexes():
            if index["name"] == "_id_":
                continue
            partial = index.get("partialFilterExpression")
            actual.add((collection, index["name"], tuple(key for key, _ in index["key"].items()),
                        bool(index.get("unique", False)), tuple(dict(partial).items()) if partial else None))  # fmt: skip
            assert all(direction == 1 for direction in index["key"].values())
    return actual


def check_indexes(db: Any) -> None:
    assert actual_indexes(db) == documented_indexes()


def check_references(db: Any) -> None:
    """Ids between documents resolve; one step per path and one task per step in each run."""
    runners = {d["uuid"]: d for d in db.runners.find({})}
    steps = {d["uuid"]: d for d in db.steps.find({})}
    tasks = list(db.tasks.find({}))
    flows = {d["uuid"] for d in db.flows.find({}, {"uuid": 1})}
    workflows = {d["uuid"]: d for d in db.workflows.find({})}
    servers = {d["uuid"] for d in db.servers.find({}, {"uuid": 1})}
    for runner in runners.values():
        assert runner["flow_id"] in flows, runner
        assert runner["workflow"]["flow_id"] == runner["flow_id"]
        own = workflows[runner["workflow_id"]]  # the run's own workflows document
        assert own["runner_id"] == runner["uuid"] and runner["workflow"]["uuid"] == own["uuid"]
        assert own["definition_id"] in workflows and own["starting_step"] == runner["step_id"]
        assert runner["workflow"]["date"] == own["date"] == runner["start_time"]
        root = steps[runner["step_id"]]
        assert (root["runner_id"], root["object_type"], root["path"]) == (runner["uuid"], "Workflow", "")
    for step in steps.values():
        runner = runners[step["runner_id"]]
        assert step["workflow_id"] == runner["workflow_id"], step
        assert step["temporal_workflow_id"] == runner["temporal_workflow_id"]
        for key in ("container_id", "block_id"):
            assert step[key] is None or steps[step[key]]["runner_id"] == step["runner_id"], (key, step)
        assert step["root_id"] == (None if step["uuid"] == runner["step_id"] else runner["step_id"]), step
        assert step["flow_id"] == runner["flow_id"], step
        assert step["timestamp"]["created"] <= step["timestamp"]["updated"]
        assert step["start_time"] <= step["last_modified"]
    paths = Counter((s["runner_id"], s["path"]) for s in steps.values())
    assert max(paths.values(), default=1) == 1, [p for p, n in paths.items() if n > 1]
    per_step = Counter(t["step_id"] for t in tasks)
    assert max(per_step.values(), default=1) == 1, [s for s, n in per_step.items() if n > 1]
    for task in tasks:
        runner = runners[task["runner_id"]]
        assert task["step_id"] in steps and task["workflow_id"] == runner["workflow_id"], task
        assert task["flow_id"] == runner["flow_id"], task
        assert steps[task["step_id"]]["facet_name"] == task["name"]
        assert task["created"] <= task["updated"]
        assert task["server_id"] == "" or task["server_id"] in servers, task
    known = set(steps) | set(runners) | {t["uuid"] for t in tasks}
    for log in db.logs.find({}):
        assert log["runner_id"] in runners, log
        assert log["object_id"] in known, log
        assert log["step_id"] is None or log["step_id"] in steps, log
    for entry in db.step_logs.find({}):
        step = steps[entry["step_id"]]
        assert (entry["runner_id"], entry["workflow_id"]) == (step["runner_id"], step["workflow_id"]), entry


def check_tree(db: Any) -> dict[str, int]:
    """Each run is one tree from its root, as the original dashboard builds it; returns steps per runner."""
    by_runner: dict[str, list[dict]] = defaultdict(list)
    for step in db.steps.find({}):
        by_runner[step["runner_id"]].append(step)
    sizes = {}
    for runner in db.runners.find({}):
        steps = by_runner[runner["uuid"]]
        roots = [s for s in steps if s["container_id"] is None and s["root_id"] is None]
        assert [r["uuid"] for r in roots] == [runner["step_id"]], runner["uuid"]
        blocks: dict[str, list[str]] = defaultdict(list)
        statements: dict[str, list[str]] = defaultdict(list)
        for s in steps:
            if s is roots[0]:
                continue
            if s["object_type"] in schema.BLOCK_TYPES:
                assert s["is_block"] and s["container_id"], s
                blocks[s["container_id"]].append(s["uuid"])
            else:
                assert not s["is_block"] and s["block_id"], s
                statements[s["block_id"]].append(s["uuid"])
        reached, todo = set(), [roots[0]["uuid"]]
        while todo:
            current = todo.pop()
            reached.add(current)
            todo += blocks.get(current, []) + statements.get(current, [])
        assert reached == {s["uuid"] for s in steps}, sorted(s["path"] for s in steps if s["uuid"] not in reached)
        sizes[runner["uuid"]] = len(steps)
    return sizes


def check_states(db: Any) -> Counter:
    """Every step's state is of the original vocabulary and the one the lifecycle table gives; counts them."""
    table = documented_lifecycles()
    seen: Counter = Counter()
    for step in db.steps.find({}):
        lifecycle, state = step["lifecycle"], step["state"]
        step_state, block_state = table[lifecycle]
        expected = block_state if step["object_type"] in schema.BLOCK_TYPES else step_state
        assert state in schema.STEP_VOCABULARY and state == expected, (step["path"], step["object_type"], lifecycle,
                                                                       state)  # fmt: skip
        seen[(step["object_type"], lifecycle)] += 1
    return seen


def check_order(db: Any) -> None:
    """``logs.order`` is unique per runner; a step's ``step_logs`` in order follow its lifecycle and the clock."""
    orders: dict[str, Counter] = defaultdict(Counter)
    for log in db.logs.find({}, {"runner_id": 1, "order": 1}):
        assert is_int(log["order"]), log
        orders[log["runner_id"]][log["order"]] += 1
    for runner, counts in orders.items():
        assert max(counts.values()) == 1, (runner, [o for o, n in counts.items() if n > 1][:5])
    by_step: dict[str, list[dict]] = defaultdict(list)
    for entry in db.step_logs.find({}):
        assert is_int(entry["order"]), entry
        by_step[entry["step_id"]].append(entry)
    for step_id, entries in by_step.items():
        entries.sort(key=lambda e: e["order"])
        assert len({e["order"] for e in entries}) == len(entries), [e["message"] for e in entries]
        # the workflow's entries and the handler's each follow their clock (a handler may report after
        # its step ended, e.g. in a cancelled run: its entries sort with their task, not by time)
        for from_handler in (False, True):
            times = [e["time"] for e in entries if ("sub" in e.get("_mirror", {})) == from_handler]
            assert times == sorted(times), [(e["order"], e["time"], e["message"]) for e in entries]
        ranks = [schema.STEP_RANK[e["details"]["lifecycle"]] for e in entries if e["details"].get("change") == "state"]
        assert ranks == sorted(ranks), (step_id, [e["message"] for e in entries])
