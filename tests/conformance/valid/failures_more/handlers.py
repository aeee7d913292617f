def use(p):
    if p["v"] < 0:
        raise ValueError(f"negative v {p['v']}")
    return {"v": p["v"]}


def register_handlers(registry):
    registry.register("fm.Use", use)
