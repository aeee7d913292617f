"""MongoProgramStore keeps programs in flows/workflows documents and honours the ProgramStore protocol."""

from __future__ import annotations

import pytest

from interpreter.activities.mirror import ids
from interpreter.activities.mirror.program_store import MongoProgramStore, publish_to_mongo
from interpreter.program.model import FacetDecl, Loc, Param, Program, TypeRef
from interpreter.program.serialize import content_hash, program_from_json, program_to_json


def program(*workflows: str, doc: str = "") -> Program:
    facets = {
        "t.Ev": FacetDecl(kind="event", name="Ev", qname="t.Ev", namespace="t", queue="t",
                          params=[Param(name="x", type=TypeRef(name="Long"))]),
    }  # fmt: skip
    for qname in workflows:
        ns, name = qname.rsplit(".", 1)
        facets[qname] = FacetDecl(kind="workflow", name=name, qname=qname, namespace=ns, doc=doc or None,
                                  loc=Loc(file="main.ffl", line=1, col=1),
                                  returns=[Param(name="y", type=TypeRef(name="Long"))])  # fmt: skip
    return Program(facets=facets)


@pytest.fixture
def store(mongo_uri, mongo_db):
    with MongoProgramStore(mongo_uri, mongo_db.name) as store:
        yield store


def test_publish_then_load_gives_the_same_bytes_and_hash(store, mongo_db) -> None:
    prog = program("t.Main", "t.Other", doc="Main doc")
    digest = store.publish(prog)
    assert digest == content_hash(prog)
    text, loaded_hash = store.load("t.Main")
    assert (text, loaded_hash) == (program_to_json(prog), digest)
    assert program_from_json(text) == prog
    assert store.load("t.Other", digest) == (text, digest)
    flow = mongo_db.flows.find_one()
    assert flow["uuid"] == ids.flow_uuid(digest) and flow["name"]["uuid"] == flow["uuid"]
    assert flow["name"]["path"] == "main.ffl"
    namespace = ids.namespace_uuid(digest, "t")
    assert flow["namespaces"] == [{"uuid": namespace, "name": "t", "path": "", "documentation": None}]
    # the original runtime's facet definitions (workflows are in ``workflows``)
    assert flow["facets"] == [{"uuid": ids.facet_uuid(digest, "t.Ev"), "name": "t.Ev", "namespace_id": namespace,
                               "parameters": [{"name": "x", "value": None, "type_hint": "Long"}],
                               "return_type": None, "documentation": None}]  # fmt: skip
    assert [w["name"] for w in flow["workflows"]] == ["t.Main", "t.Other"]
    (ns,) = flow["compiled_ast"]["declarations"]
    assert (flow["compiled_ast"]["type"], ns["type"], ns["name"]) == ("Program", "Namespace", "t")
    assert [(d["type"], d["name"]) for d in ns["declarations"]] == [
        ("EventFacetDecl", "Ev"), ("WorkflowDecl", "Main"), ("WorkflowDecl", "Other")]
    assert ns["declarations"][1]["returns"] == [{"name": "y", "type": "Long"}]
    assert ns["declarations"][1]["doc"] == {"description": "Main doc", "params": [], "returns": []}
    workflow = mongo_db.workflows.find_one({"name": "t.Main"})
    assert workflow["uuid"] == ids.workflow_uuid(digest, "t.Main")
    assert workflow["flow_id"] == flow["uuid"] and workflow["version"] == digest
    assert workflow["namespace_id"] == "t" and workflow["facet_id"] == "t.Main"
    assert workflow["documentation"] == "Main doc" and isinstance(workflow["date"], int) and workflow["date"] > 0


def test_publishing_twice_is_idempotent_and_latest_wins(store, mongo_db) -> None:
    old, new = program("t.Main"), program("t.Main", doc="v2")
    h_old = store.publish(old)
    store.publish(old)
    assert mongo_db.flows.count_documents({}) == 1 and mongo_db.workflows.count_documents({}) == 1
    h_new = store.publish(new)
    assert h_new != h_old
    assert store.load("t.Main")[1] == h_new
    assert store.load("t.Main", h_old)[1] == h_old  # a pinned run still finds its program
    store.publish(old)
    assert store.load("t.Main")[1] == h_old
    assert mongo_db.flows.count_documents({}) == 2


def test_unknown_workflow_names_only_the_workflow_asked_for(store) -> None:
    store.publish(program("t.Main"))
    with pytest.raises(LookupError) as info:
        store.load("t.Missing")
    assert str(info.value) == "no published program holds workflow 't.Missing'"  # no list, no database name
    with pytest.raises(LookupError, match="no program with hash"):
        store.load("t.Main", "0" * 64)
    with pytest.raises(LookupError, match="has no workflow 't.Ev'"):
        store.load("t.Ev", store.publish(program("t.Main")))


def test_publish_to_mongo(mongo_uri, mongo_db) -> None:
    digest = publish_to_mongo(program("t.Main"), mongo_uri, mongo_db.name).hash
    assert MongoProgramStore(mongo_uri, mongo_db.name).load("t.Main")[1] == digest


def test_writer_pins_the_runners_program(mongo_uri, mongo_db, store, make_writer) -> None:
    prog = program("t.Main")
    digest = store.publish(prog)
    writer = make_writer(mongo_uri, mongo_db.name, program_store=store)
    writer.write([{"kind": "runner", "workflow_id": "w", "run_id": "r", "workflow": "t.Main", "state": "running",
                   "program_hash": digest, "params": {}}])  # fmt: skip
    assert writer.flush(20)
    runner = mongo_db.runners.find_one()
    assert runner["compiled_ast"] == program_from_json(program_to_json(prog)).model_dump(mode="json",
                                                                                         exclude_none=True)
    assert runner["workflow_ast"]["qname"] == "t.Main"
    assert runner["workflow"]["uuid"] == runner["workflow_id"] == ids.run_workflow_uuid("w", "r")
    own = mongo_db.workflows.find_one({"uuid": runner["workflow_id"]})
    assert own["definition_id"] == ids.workflow_uuid(digest, "t.Main") and own["version"] == digest
    assert store.load("t.Main") == (program_to_json(prog), digest)  # a run's definition is not a published one
    assert store.published() == ["t.Main"]
