"""Report handlers: one summary line per run.

Imports its helpers relatively, the other way the original's packages do.
"""

from ..shared.formatting import STOCK

SUMMARIZE_QUALIFIED = "inventory.reports.Summarize"


def handle_summarize(payload: dict) -> dict:
    lines = payload["lines"]
    empty = [sku for sku in lines if STOCK.get(sku, 0) == 0]
    if empty:
        payload["_step_log"](f"out of stock: {', '.join(empty)}", level="warning")
    payload["_task_heartbeat"](progress_pct=100, progress_message="summarized")
    return {"text": f"{len(lines)} skus, {len(empty)} empty", "served_by": payload["_facet_name"]}


def register_report_handlers(poller) -> None:
    poller.register(SUMMARIZE_QUALIFIED, handle_summarize)
