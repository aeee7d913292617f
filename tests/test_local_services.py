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


def test_a_port_taken_before_the_service_binds_it_is_retried_on_a_fresh_port(monkeypatch) -> None:
    """free_port() can hand out a port another process takes first: the service starts on another one."""
    import socket

    from interpreter.local import services

    squatter = socket.socket()
    squatter.bind(("127.0.0.1", 0))  # bound, not listening: the child's bind fails, a probe is refused
    taken = squatter.getsockname()[1]
    real_free_port = services.free_port
    offered = iter([taken])
    monkeypatch.setattr(services, "free_port", lambda: next(offered, None) or real_free_port())
    try:
        mongo = services.start_mongo()
        try:
            assert mongo.port != taken
            client = pymongo.MongoClient(mongo.extra["uri"], serverSelectionTimeoutMS=5000)
            assert client.admin.command("ping")["ok"] == 1
        finally:
            mongo.stop()
    finally:
        squatter.close()
