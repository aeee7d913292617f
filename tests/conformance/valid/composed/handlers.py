def inc(p):
    return {"n": p["n"] + 1}


def note(p):
    return {"text": p["text"]}


def lookup(p):
    return {"v": "val-" + p["k"], "note": "handler"}


def register_handlers(registry):
    registry.register("comp.Inc", inc)
    registry.register("comp.Note", note)
    registry.register("comp.Lookup", lookup)
