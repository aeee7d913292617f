def lister(p):
    return {"items": list(range(p["n"]))}


def wrap(p):
    return {"s": "[" + p["s"] + "]"}


def register_handlers(registry):
    registry.register("stm.Lister", lister)
    registry.register("stm.Wrap", wrap)
