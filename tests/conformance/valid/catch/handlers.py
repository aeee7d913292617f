class QuotaExceeded(Exception):
    pass


def risky(p):
    x = p["x"]
    if x < 0:
        raise ValueError(f"negative input {x}")
    if x == 0:
        raise KeyError("zero")
    if x == 7:
        raise QuotaExceeded("quota")
    return {"v": x * 10}


def echo(p):
    return {"s": p["s"]}


def register_handlers(registry):
    registry.register("cat.Risky", risky)
    registry.register("cat.Echo", echo)
