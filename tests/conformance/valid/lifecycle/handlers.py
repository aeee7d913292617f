def grade(p):
    return {"level": "from-handler", "seen": p.get("hint", "no script before the handler")}


def keys(p):
    return {"args": list(p), "inner": list(p["record"])}


def total(p):
    return {"total": float(sum(p["items"]))}


def path(p):
    return {"value": "/tmp/a5"}


def listing(p):
    return {"items": list(range(p["n"]))}


def double(p):
    return {"y": 2 * p["x"]}


def register_handlers(registry):
    registry.register("life.List", listing)
    registry.register("life.Double", double)
    registry.register("life.Grade", grade)
    registry.register("life.Keys", keys)
    registry.register("life.Total", total)
    registry.register("life.Path", path)
