def tag(p):
    return {"t": f"{p['s']}{p['i']}"}


def register_handlers(registry):
    registry.register("deep.Tag", tag)
