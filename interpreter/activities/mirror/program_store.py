"""MongoProgramStore: the ProgramStore protocol over the original schema's flows and workflows collections.

A compiled program is one ``flows`` document named by its content hash (the
canonical JSON is kept verbatim in ``compiled_sources`` so loading gives back
the same bytes and hash); each workflow it holds is one ``workflows``
document. ``published`` (ns since epoch) is bumped on every publish, so
"latest" means the program most recently published with that workflow, as in
the directory store. As there, loading verifies that the content hashes to
the flow's hash, publishing repairs a damaged copy, moving a workflow to
another program needs ``replace``, and documents record their publisher.
"""

from __future__ import annotations

import time
from typing import Any

from pymongo import MongoClient

from ...program.model import Program
from ...program.serialize import content_hash, program_to_json
from ..program_store import (
    PublishConflict,
    Published,
    check_workflow,
    checked_names,
    default_publisher,
    text_hash,
    verified,
)
from . import ids, original_ast, schema
from .documents import workflow_definition
from .writer import database_from_uri

SOURCE_LANGUAGE = "ffl-program-json"

DERIVED = ("namespaces", "facets", "compiled_ast")
"""Flow fields computed from the program in the original runtime's shapes."""

PUBLISHED = {"published": {"$exists": True}}
"""Published definitions; the mirror also keeps one workflows document per run (no ``published``)."""


def flow_document(program: Program, text: str, digest: str, now: int) -> dict[str, Any]:
    """The schema's FlowDefinition for a compiled program.

    ``namespaces``, ``facets`` and ``compiled_ast`` are in the original
    runtime's shapes (original_ast.py), which its dashboard reads; the
    program itself is kept verbatim in ``compiled_sources``.
    """
    flow = ids.flow_uuid(digest)
    workflows = program.workflows
    files = sorted({f.loc.file for f in program.facets.values() if f.loc and f.loc.file})
    return {
        "_id": flow,
        "uuid": flow,
        "name": {"name": workflows[0] if workflows else "program", "path": files[0] if files else "", "uuid": flow},
        "namespaces": original_ast.namespaces(program, digest),
        "facets": original_ast.facet_definitions(program, digest),
        "workflows": [workflow_definition(name, digest, now) for name in workflows],
        "mixins": [], "blocks": [], "statements": [], "arguments": [], "references": [], "script_code": [],
        "file_artifacts": [], "jar_artifacts": [], "resources": [], "text_sources": [],
        "inline": None, "classification": None, "publisher": None, "ownership": None,
        "compiled_sources": [{"name": "program.json", "language": SOURCE_LANGUAGE, "content": text}],
        "compiled_ast": original_ast.program_ast(program),
        "program_hash": digest,
        "date": now,
    }  # fmt: skip


class MongoProgramStore:
    """Publish and load compiled programs in MongoDB (the ProgramStore protocol)."""

    def __init__(self, uri: str, database: str | None = None, *, timeout_ms: int = 5000) -> None:
        self.database = database_from_uri(uri, database)
        self._client: MongoClient = MongoClient(uri, serverSelectionTimeoutMS=timeout_ms)
        self._db = self._client[self.database]
        self._indexed = False

    def _ready(self) -> Any:
        if not self._indexed:
            schema.ensure_indexes(self._db)
            self._indexed = True
        return self._db

    def current(self, workflow: str) -> str | None:
        """The hash of the program most recently published with ``workflow``, or None."""
        latest = self._ready()[schema.WORKFLOWS].find_one({"name": workflow, **PUBLISHED}, sort=[("published", -1)])
        return latest["version"] if latest is not None else None

    def publish(self, program: Program) -> str:
        return self.publish_report(program).hash

    def publish_report(self, program: Program, *, replace: bool = True, publisher: str | None = None) -> Published:
        db = self._ready()
        text = program_to_json(program)
        digest = content_hash(program)
        previous = {name: self.current(name) for name in program.workflows}
        replaced = {name: old for name, old in previous.items() if old is not None and old != digest}
        if replaced and not replace:
            raise PublishConflict(digest, replaced)
        who = publisher or default_publisher()
        now = ids.now_ms()
        flow = flow_document(program, text, digest, now)
        flow["publisher"] = {"email": who, "name": who, "avatar": ""}
        existing = db[schema.FLOWS].find_one({"_id": flow["_id"]}, {"compiled_sources": 1})
        stored = _stored_text(existing) if existing is not None else None
        repaired = existing is not None and (stored is None or text_hash(stored) != digest)
        if repaired:  # a damaged copy: publishing again puts the program back
            db[schema.FLOWS].update_one({"_id": flow["_id"]}, {"$set": {"compiled_sources": flow["compiled_sources"],
                                                                          "program_hash": digest}})  # fmt: skip
        derived = {key: flow.pop(key) for key in DERIVED}  # rewritten: a flow stored by an older version catches up
        db[schema.FLOWS].update_one({"_id": flow["_id"]}, {"$setOnInsert": flow, "$set": derived}, upsert=True)
        for name in program.workflows:
            definition = workflow_definition(name, digest, now)
            definition["documentation"] = program.facets[name].doc
            fixed = {k: v for k, v in definition.items() if k != "date"}
            db[schema.WORKFLOWS].update_one(
                {"_id": definition["uuid"]},
                {"$set": {**fixed, "published": time.time_ns(), "publisher": who}, "$setOnInsert": {"date": now}},
                upsert=True,
            )
        return Published(digest, replaced, repaired)

    def published(self) -> list[str]:
        """Qualified names of every published workflow, sorted."""
        return sorted(self._ready()[schema.WORKFLOWS].distinct("name", PUBLISHED))

    def load(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        text, program_hash = self.fetch(workflow, program_hash)
        check_workflow(text, workflow, program_hash)
        return text, program_hash

    def fetch(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        checked_names(workflow, program_hash)
        db = self._ready()
        if program_hash is None:
            program_hash = self.current(workflow)
            if program_hash is None:
                raise LookupError(f"no published program holds workflow '{workflow}'")
        flow = db[schema.FLOWS].find_one({"_id": ids.flow_uuid(program_hash)})
        if flow is None:
            raise LookupError(f"no program with hash {program_hash} is published")
        return verified(_stored_text(flow) or "", program_hash), program_hash

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> MongoProgramStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stored_text(flow: dict[str, Any]) -> str | None:
    """The canonical program JSON a flow document keeps, or None."""
    for source in flow.get("compiled_sources") or []:
        if isinstance(source, dict) and source.get("language") == SOURCE_LANGUAGE:
            return source.get("content") if isinstance(source.get("content"), str) else None
    return None


def publish_to_mongo(program: Program, uri: str, database: str | None = None, *, replace: bool = True,
                     publisher: str | None = None) -> Published:
    """Publish ``program`` to the MongoDB at ``uri`` (for ``ffl publish --mongo``)."""
    with MongoProgramStore(uri, database) as store:
        return store.publish_report(program, replace=replace, publisher=publisher)
