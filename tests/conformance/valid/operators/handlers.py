def rec(p):
    return {
        "rec": {"inner": {"name": "deep-" + p["key"]}, "list": [7, 8, 9]},
        "n": 4,
        "flag": True,
        "none": None,
    }


def register_handlers(registry):
    registry.register("ops.Rec", rec)
