import threading

_events: dict[str, threading.Event] = {}
_lock = threading.Lock()


def _event(name: str) -> threading.Event:
    with _lock:
        return _events.setdefault(name, threading.Event())


def meet(p):
    _event(p["me"]).set()
    return {"saw": _event(p["other"]).wait(timeout=4.0)}


def register_handlers(registry):
    registry.register("conc.Meet", meet)
