def echo(p):
    return {"echo": {k: p[k] for k in sorted(p)}}


def register_handlers(registry):
    for name in ("mix.Send", "mix.Ship", "mix.ShipAliased"):
        registry.register(name, echo)
