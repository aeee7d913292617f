"""Formatting helpers shared by the inventory handlers."""

STOCK = {"apple": 3, "pear": 12, "plum": 0}


def shelf_label(sku: str, qty: int) -> str:
    return f"{sku.upper()}x{qty}"
