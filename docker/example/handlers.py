"""Handlers of the compose stack's example worker (queue "hello")."""


def greet(payload: dict) -> dict:
    payload["_step_log"](f"greeting {payload['name']}")
    return {"greeting": f"Hello, {payload['name']}!"}


def register_handlers(registry) -> None:
    registry.register("hello.Greet", greet)
