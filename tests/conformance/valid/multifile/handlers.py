def core_price(p):
    return {"cents": 105 * len(p["item"])}


def util_price(p):
    return {"cents": 7}


def tax(p):
    return {"tax": p["cents"] // 10}


def register_handlers(registry):
    registry.register("shop.core.Price", core_price)
    registry.register("shop.util.Price", util_price)
    registry.register("Tax", tax)
