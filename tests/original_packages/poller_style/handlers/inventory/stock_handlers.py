"""Stock handlers: counting and restocking.

Imports its helpers by the package's absolute name, as the original
runtime's example packages do.
"""

import logging

from handlers.shared.formatting import STOCK, shelf_label

log = logging.getLogger(__name__)

NAMESPACE = "inventory"


def handle_count(payload: dict) -> dict:
    step_log = payload.get("_step_log")
    heartbeat = payload.get("_task_heartbeat")
    sku = payload["sku"]
    if heartbeat:
        heartbeat(50, f"counting {sku}")
    qty = STOCK.get(sku, 0)
    if step_log:
        step_log(f"{sku}: {qty} on the shelf", "success")
    return {"sku": sku, "qty": qty, "served_by": payload["_facet_name"], "task": payload["_task_uuid"]}


def handle_restock(payload: dict) -> dict:
    item = payload["item"]
    ordered = max(0, payload["target"] - item["qty"])
    payload["_step_log"](f"ordering {ordered} of {item['sku']}", level="info",
                         details={"sku": item["sku"], "ordered": ordered})
    return {"ordered": ordered, "label": shelf_label(item["sku"], item["qty"] + ordered)}


_HANDLERS = {
    "Count": handle_count,
    "Restock": handle_restock,
}


def register_stock_handlers(poller) -> None:
    """Register the stock handlers with the given poller."""
    for name, callback in _HANDLERS.items():
        facet_name = f"{NAMESPACE}.{name}"
        poller.register(facet_name, callback)
        log.debug("registered %s", facet_name)
