import time


def wait(p):
    time.sleep(p["ms"] / 1000.0)
    return {"tag": p["tag"]}


def probe(p):
    x = p["x"]
    out = {"info": {"tags": ["t"] if x >= 100 else []}}
    if x % 2 == 0:
        out["score"] = x
    if x >= 10:
        out["info"]["level"] = "high"
    return out


def register_handlers(registry):
    registry.register("wh.Wait", wait)
    registry.register("wh.Probe", probe)
