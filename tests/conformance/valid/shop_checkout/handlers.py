STOCK = {"apple": 10, "pear": 1, "banana": 5}


def reserve(p):
    sku, qty = p["sku"], p["qty"]
    if sku not in STOCK:
        raise LookupError("no such sku " + sku)
    if qty > STOCK[sku]:
        raise ValueError(f"only {STOCK[sku]} left")
    return {"left": STOCK[sku] - qty}


def charge(p):
    if p["amount"] > 500:
        raise ValueError("card declined for " + p["order"])
    return {"receipt": p["order"] + "-" + p["currency"], "charged": p["amount"]}


def notify(p):
    return {"channel": p["via"]["channel"]}


def register_handlers(registry):
    registry.register("shop.orders.Reserve", reserve)
    registry.register("shop.orders.Notify", notify)
    registry.register("shop.pay.Charge", charge)
