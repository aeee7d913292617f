# handlers.py — a handler is a plain function from a payload dict to a returns dict
def add(payload):
    payload["_step_log"](f"adding {payload['x']} and {payload['y']}")
    return {"sum": payload["x"] + payload["y"]}


def register_handlers(registry):
    registry.register("calc.Add", add)
