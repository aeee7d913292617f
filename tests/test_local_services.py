"""The local services start from their packaged binaries and answer real clients."""

from __future__ import annotations

import pymongo


async def test_temporal_dev_server_answers(temporal_client) -> None:
    from temporalio.api.workflowservice.v1 import ListNamespacesRequest

    response = await temporal_client.workflow_service.list_namespaces(ListNamespacesRequest())
    assert "default" in [ns.namespace_info.name for ns in response.namespaces]


def test_mongo_wire_server_round_trip(mongo_service, mongo_db_name) -> None:
    client = pymongo.MongoClient(mongo_service.extra["uri"], serverSelectionTimeoutMS=5000)
    coll = client[mongo_db_name]["probe"]
    coll.insert_one({"_id": "a", "n": 1})
    assert coll.find_one({"_id": "a"}) == {"_id": "a", "n": 1}
