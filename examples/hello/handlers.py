"""Handlers for examples/hello/program.ffl: plain functions from a payload dict to a returns dict.

Each ``@handler("ns.Facet")`` function answers the event facet of that name;
``python worker.py --task-queue hello --handlers examples/hello/handlers.py``
serves them. The payload also carries ``_step_log`` (a log line shown with
the step) and ``_task_heartbeat``, ``_retry_count`` and ``_is_retry``.
"""

from interpreter.activities.handlers import handler

_PEOPLE = {
    "ada": ("en", True),
    "grace": ("en", True),
    "linus": ("fi", False),
}

_WORDS = {
    ("fi", "Hi"): "Moi",
    ("fi", "Good day"): "Hyvää päivää",
}


@handler("hello.Lookup")
def lookup(payload: dict) -> dict:
    language, formal = _PEOPLE.get(payload["name"].lower(), ("en", False))
    payload["_step_log"](f"{payload['name']}: language {language}, formal {formal}")
    return {"language": language, "formal": formal}


@handler("hello.Compose")
def compose(payload: dict) -> dict:
    word = _WORDS.get((payload["language"], payload["greeting"]), payload["greeting"])
    return {"text": f"{word}, {payload['name']}!"}


@handler("hello.Summarize")
async def summarize(payload: dict) -> dict:
    lines = payload.get("lines") or []
    return {"summary": " ".join(lines), "count": len(lines)}
