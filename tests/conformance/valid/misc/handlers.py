import asyncio


async def async_upper(p):
    await asyncio.sleep(0.01)
    return {"s": p["s"].upper()}


def nothing(p):
    return None


def register_handlers(registry):
    registry.register("misc.AsyncUpper", async_upper)
    registry.register("misc.Nothing", nothing)
