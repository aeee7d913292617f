def echo(p):
    return {"seen": {k: p[k] for k in sorted(p)}}


def register_handlers(registry):
    registry.register("conf.Echo", echo)
    registry.register("conf.Plain", echo)
