def echo(p):
    return {"y": p["x"]}


def fails(p):
    raise RuntimeError(f"no y for {p['x']}")


def register_handlers(registry):
    registry.register("inner.Echo", echo)
    registry.register("inner.Fails", fails)
