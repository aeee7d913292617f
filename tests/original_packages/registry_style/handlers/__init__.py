"""Billing event handlers, registered with a RegistryRunner.

Each module names its handler functions (``module_uri`` + ``entrypoint``)
instead of passing them; the runner imports them.
"""

from .invoices.invoice_handlers import register_handlers as register_invoice_handlers
from .payments.payment_handlers import register_handlers as register_payment_handlers

__all__ = [
    "register_all_registry_handlers",
    "register_invoice_handlers",
    "register_payment_handlers",
]


def register_all_registry_handlers(runner) -> None:
    """Register every billing event facet with a RegistryRunner."""
    register_invoice_handlers(runner)
    register_payment_handlers(runner)
