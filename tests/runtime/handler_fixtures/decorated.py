"""Handlers registered with the decorator (a fixture for the loader tests)."""

from interpreter.activities.handlers import handler


@handler("deco.Double")
def double(payload):
    return {"value": payload["n"] * 2}


@handler("Top")
async def top(payload):
    return {"ok": True}
