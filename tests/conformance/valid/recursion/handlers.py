def mul(p):
    return {"p": p["a"] * p["b"]}


def register_handlers(registry):
    registry.register("rec.Mul", mul)
