def risky(p):
    x = p["x"]
    if x < 0:
        raise ArithmeticError(f"bad x {x}")
    out = {"value": x * 2}
    if x == 5:
        out["extra"] = None
    return out


def echo(p):
    return {"s": p["s"]}


def register_handlers(registry):
    registry.register("cm.Risky", risky)
    registry.register("cm.Echo", echo)
