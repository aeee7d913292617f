def dist(p):
    a, b = p["p"], p["q"]
    return {"d": abs(a["x"] - b["x"]) + abs(a["y"] - b["y"])}


def register_handlers(registry):
    registry.register("geo.Dist", dist)
