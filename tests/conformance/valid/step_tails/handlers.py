def add(p):
    return {"sum": p["x"] + p["y"]}


def split(p):
    parts = [w for w in p["text"].split(" ") if w]
    return {"parts": parts, "count": len(parts)}


def upper(p):
    return {"s": p["s"].upper()}


def register_handlers(registry):
    registry.register("tail.Add", add)
    registry.register("tail.Split", split)
    registry.register("tail.Upper", upper)
