"""MongoProgramStore: the ProgramStore protocol over the original schema's flows and workflows collections.

A compiled program is one ``flows`` document named by its content hash (the
canonical JSON is kept verbatim in ``compiled_sources`` so loading gives back
the same bytes and hash); each workflow it holds is one ``workflows``
document. ``published`` (ns since epoch) is bumped on every publish, so
"latest" means the program most recently published with that workflow, as in
the directory store.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pymongo import MongoClient

from ...program.model import Program
from ...program.serialize import content_hash, program_to_json
from . import ids, schema
from .documents import workflow_definition
from .writer import database_from_uri

SOURCE_LANGUAGE = "ffl-program-json"


def flow_document(program: Program, text: str, digest: str, now: int) -> dict[str, Any]:
    """The original schema's FlowDefinition for a compiled program (summaries; the program itself in compiled_sources)."""
    flow = ids.flow_uuid(digest)
    workflows = program.workflows
    files = sorted({f.loc.file for f in program.facets.values() if f.loc and f.loc.file})
    namespaces = sorted({f.namespace for f in program.facets.values() if f.namespace}
                        | {s.namespace for s in program.schemas.values() if s.namespace})  # fmt: skip
    return {
        "_id": flow,
        "uuid": flow,
        "name": {"name": workflows[0] if workflows else "program", "path": files[0] if files else "", "uuid": flow},
        "namespaces": [{"uuid": ids.flow_uuid(f"{digest}/{ns}"), "name": ns} for ns in namespaces],
        "facets": [
            {"name": qname, "kind": facet.kind, "namespace": facet.namespace, "queue": facet.queue,
             "params": [p.name for p in facet.params], "returns": [r.name for r in facet.returns],
             "documentation": facet.doc}
            for qname, facet in sorted(program.facets.items())
        ],  # fmt: skip
        "workflows": [workflow_definition(name, digest, now) for name in workflows],
        "mixins": [], "blocks": [], "statements": [], "arguments": [], "references": [], "script_code": [],
        "file_artifacts": [], "jar_artifacts": [], "resources": [], "text_sources": [],
        "inline": None, "classification": None, "publisher": None, "ownership": None,
        "compiled_sources": [{"name": "program.json", "language": SOURCE_LANGUAGE, "content": text}],
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

    def publish(self, program: Program) -> str:
        db = self._ready()
        text = program_to_json(program)
        digest = content_hash(program)
        now = ids.now_ms()
        flow = flow_document(program, text, digest, now)
        db[schema.FLOWS].update_one({"_id": flow["_id"]}, {"$setOnInsert": flow}, upsert=True)
        for name in program.workflows:
            definition = workflow_definition(name, digest, now)
            definition["documentation"] = program.facets[name].doc
            fixed = {k: v for k, v in definition.items() if k != "date"}
            db[schema.WORKFLOWS].update_one(
                {"_id": definition["uuid"]},
                {"$set": {**fixed, "published": time.time_ns()}, "$setOnInsert": {"date": now}},
                upsert=True,
            )
        return digest

    def published(self) -> list[str]:
        """Qualified names of every published workflow, sorted."""
        return sorted(self._ready()[schema.WORKFLOWS].distinct("name"))

    def load(self, workflow: str, program_hash: str | None = None) -> tuple[str, str]:
        db = self._ready()
        if program_hash is None:
            latest = db[schema.WORKFLOWS].find_one({"name": workflow}, sort=[("published", -1)])
            if latest is None:
                known = ", ".join(self.published()) or "nothing"
                raise LookupError(f"no published program holds workflow '{workflow}' in MongoDB database "
                                  f"{self.database} (published: {known})")  # fmt: skip
            program_hash = latest["version"]
        flow = db[schema.FLOWS].find_one({"_id": ids.flow_uuid(program_hash)})
        if flow is None:
            raise LookupError(f"no program with hash {program_hash} in MongoDB database {self.database}")
        text = next(s["content"] for s in flow["compiled_sources"] if s.get("language") == SOURCE_LANGUAGE)
        facets = json.loads(text).get("facets", {})
        if facets.get(workflow, {}).get("kind") != "workflow":
            known = ", ".join(sorted(n for n, f in facets.items() if f.get("kind") == "workflow"))
            raise LookupError(f"program {program_hash} has no workflow '{workflow}' (it has: {known or 'none'})")
        return text, program_hash

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> MongoProgramStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def publish_to_mongo(program: Program, uri: str, database: str | None = None) -> str:
    """Publish ``program`` to the MongoDB at ``uri`` (for ``ffl publish --mongo``); returns its hash."""
    with MongoProgramStore(uri, database) as store:
        return store.publish(program)
