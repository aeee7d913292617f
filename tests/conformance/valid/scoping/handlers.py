def num(p):
    return {"n": p["n"], "list": list(range(p["n"] % 4))}


def tag(p):
    return {"s": p["s"]}


def register_handlers(registry):
    registry.register("sc.Num", num)
    registry.register("sc.Tag", tag)
