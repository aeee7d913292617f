import time


def slow(p):
    time.sleep(p["ms"] / 1000.0)
    return {"tag": p["tag"], "ms": p["ms"]}


def register_handlers(registry):
    registry.register("blk.Slow", slow)
