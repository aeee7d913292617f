def explode(p):
    raise RuntimeError(f"kaboom-{p['x']}")


def fine(p):
    return {"v": p["x"] + 1}


def register_handlers(registry):
    registry.register("boom.Explode", explode)
    registry.register("boom.Fine", fine)
