def grade(p):
    return {"level": "from-handler", "seen": p.get("hint", "no script before the handler")}


def keys(p):
    return {"args": list(p), "inner": list(p["record"])}


def total(p):
    return {"total": float(sum(p["items"]))}


def path(p):
    return {"value": "/tmp/a5"}


def register_handlers(registry):
    registry.register("life.Grade", grade)
    registry.register("life.Keys", keys)
    registry.register("life.Total", total)
    registry.register("life.Path", path)
