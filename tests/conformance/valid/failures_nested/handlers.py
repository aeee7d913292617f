class CardDeclined(Exception):
    pass


class FraudSuspected(ValueError):
    pass


def charge(p):
    amount = p["amount"]
    if amount > 1000:
        raise FraudSuspected(f"amount {amount} looks odd")
    if amount > 100:
        raise CardDeclined(f"card declined for {amount}")
    if amount < 0:
        raise KeyError("negative")
    return {"receipt": f"r-{amount}"}


def weird(p):
    return [p["x"]] if p["x"] > 0 else {"v": p["x"]}


def ok(p):
    return {"v": p["x"]}


def register_handlers(registry):
    registry.register("fn.Charge", charge)
    registry.register("fn.Weird", weird)
    registry.register("fn.Ok", ok)
