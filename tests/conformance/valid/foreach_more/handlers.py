import time


def cells(p):
    return {"cells": [p["row"] + str(i) for i in range(p["n"])]}


def join(p):
    return {"s": p["a"] + "/" + p["b"]}


def delay(p):
    time.sleep(p["ms"] / 1000.0)
    return {"v": p["v"]}


def register_handlers(registry):
    registry.register("fe.Cells", cells)
    registry.register("fe.Join", join)
    registry.register("fe.Delay", delay)
