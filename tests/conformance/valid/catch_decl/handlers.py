def fragile(p):
    if p["x"] < 0:
        raise ValueError("negative")
    return {"v": p["x"], "note": "fine"}


def boom(p):
    raise OSError("disk full")


def register_handlers(registry):
    registry.register("cd.Fragile", fragile)
    registry.register("cd.Boom", boom)
