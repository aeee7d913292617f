"""Invoice handlers: one ``handle`` entrypoint serves several facets by ``_facet_name``."""

import os
from collections.abc import Callable

from handlers.common.money import cents

NAMESPACE = "billing"


def _invoice(payload: dict) -> dict:
    payload["_step_log"](f"invoice for {payload['customer']}: {cents(payload['amount'])}", "success")
    metadata = payload.get("_handler_metadata", {})
    return {
        "number": f"INV-{payload['customer']}-{payload['amount']}",
        "tier": metadata.get("tier", "none"),
        "served_by": payload["_facet_name"],
        "task": payload["_task_uuid"],
    }


def _refund(payload: dict) -> dict:
    return {"ok": payload["number"].startswith("INV-"), "served_by": payload["_facet_name"]}


_DISPATCH: dict[str, Callable[[dict], dict]] = {
    f"{NAMESPACE}.Invoice": _invoice,
    f"{NAMESPACE}.Refund": _refund,
}


def handle(payload: dict) -> dict:
    """RegistryRunner entrypoint: route by the facet being handled."""
    facet_name = payload["_facet_name"]
    handler = _DISPATCH.get(facet_name)
    if handler is None:
        raise ValueError(f"Unknown facet: {facet_name}")
    return handler(payload)


def register_handlers(runner) -> None:
    """Register the invoice facets with a RegistryRunner (this file, by path)."""
    for facet_name in _DISPATCH:
        runner.register_handler(
            facet_name=facet_name,
            module_uri=f"file://{os.path.abspath(__file__)}",
            entrypoint="handle",
            version="1.2.0",
            checksum="sha256:invoices",
            metadata={"tier": "gold"},
        )
