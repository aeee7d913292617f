"""Inventory event handlers, registered with a poller.

Handler modules live in functional sub-packages; this module re-exports each
area's registration function and registers them all.
"""

from .inventory.audit_handlers import register_audit_handlers
from .inventory.stock_handlers import register_stock_handlers
from .reports.report_handlers import register_report_handlers

__all__ = [
    "register_all_handlers",
    "register_audit_handlers",
    "register_report_handlers",
    "register_stock_handlers",
]


def register_all_handlers(poller) -> None:
    """Register every inventory event facet handler with the given poller."""
    register_stock_handlers(poller)
    register_report_handlers(poller)
    register_audit_handlers(poller)
