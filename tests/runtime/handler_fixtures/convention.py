"""Handlers registered the original runtime's way (a fixture for the loader tests)."""


def shout(payload):
    return {"text": payload["text"].upper()}


def register_handlers(registry):
    registry.register("conv.Shout", shout)
