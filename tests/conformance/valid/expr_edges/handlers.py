def rec(p):
    return {
        "rec": {"inner": {"b": [1, 2], "c": "d"}},
        "nums": [10, 20, 30],
        "empty": {},
        "none": None,
    }


def register_handlers(registry):
    registry.register("ee.Rec", rec)
