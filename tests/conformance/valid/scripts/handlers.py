def show(p):
    return {"s": "<" + p["s"] + ">"}


def register_handlers(registry):
    registry.register("scr.Show", show)
