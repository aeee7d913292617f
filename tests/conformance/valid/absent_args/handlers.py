def keys(p):
    return {"keys": sorted(p)}


def register_handlers(registry):
    registry.register("gap.Keys", keys)
