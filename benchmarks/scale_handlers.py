"""The scale benchmark's handler: a no-op that returns its argument (served by worker.py --handlers)."""


async def noop(payload: dict) -> dict:
    return {"i": payload["i"]}


def register_handlers(registry) -> None:
    registry.register("bench.Noop", noop)
