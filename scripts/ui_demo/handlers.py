"""Handlers of the UI demo: prices by name length (flaky ones after two failures), a reservation that fails for
"broken" items."""

import time

from interpreter.activities.handlers import handler


@handler("shop.Price")
def price(payload):
    time.sleep(60 if payload["item"].startswith("slow") else 0.3)  # "slow-…" items keep a run live
    if payload["item"].startswith("flaky") and payload["_retry_count"] < 2:  # succeeds on its third attempt
        raise ConnectionError(f"price service busy for {payload['item']}")
    return {"amount": 50 * len(payload["item"])}


@handler("shop.Reserve")
def reserve(payload):
    if "broken" in payload["item"]:
        raise ValueError(f"no stock for {payload['item']}")
    return {"ticket": f"T-{payload['item']}-{payload['amount']}"}


@handler("shop.Notify")
def notify(payload):
    return {"sent": True}
