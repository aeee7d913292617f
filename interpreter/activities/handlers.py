"""Handler registry: which Python function answers which event facet.

Two registration conventions, both plain functions ``f(payload: dict) -> dict``
(or ``async def``):

- the ``@handler("ns.Facet")`` decorator, recorded per defining module, so
  :func:`load_handlers` can pick a module's handlers up even when the module
  was imported earlier;
- a module-level ``register_handlers(registry)`` calling
  ``registry.register("ns.Facet", f)`` (the original runtime's convention).

A spec for :func:`load_handlers` is an importable module/package name, a
``.py`` file, or a directory of ``.py`` files.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

Handler = Callable[[dict], Any]
"""``f(payload) -> dict`` or an ``async def`` returning a dict."""

DEFAULT_QUEUE = "default"


class NonRetryableError(Exception):
    """Raise (or subclass) in a handler to fail the step without further retries."""


class HandlerLoadError(RuntimeError):
    """A handler spec could not be found or imported."""


def queue_for(facet: str, overrides: Mapping[str, str] | None = None) -> str:
    """Task queue of a facet: an override (facet name, then longest namespace prefix) or its first segment."""
    if overrides:
        if facet in overrides:
            return overrides[facet]
        parts = facet.split(".")[:-1]
        while parts:
            prefix = ".".join(parts)
            if prefix in overrides:
                return overrides[prefix]
            parts.pop()
    return facet.split(".", 1)[0] if "." in facet else DEFAULT_QUEUE


class HandlerRegistry:
    """Facet qualified name → handler. Registering one name twice keeps the last, like a dict."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, name: str, fn: Handler) -> Handler:
        if not isinstance(name, str) or not name:
            raise ValueError(f"handler name must be a non-empty string, got {name!r}")
        if not callable(fn):
            raise TypeError(f"handler for {name} is not callable: {fn!r}")
        self._handlers[name] = fn
        return fn

    def lookup(self, name: str) -> Handler | None:
        return self._handlers.get(name)

    def names(self, queue: str | None = None, overrides: Mapping[str, str] | None = None) -> list[str]:
        """Registered facet names, sorted; only those on ``queue`` when given."""
        return sorted(n for n in self._handlers if queue is None or queue_for(n, overrides) == queue)

    def queues(self, overrides: Mapping[str, str] | None = None) -> list[str]:
        return sorted({queue_for(n, overrides) for n in self._handlers})

    def update(self, other: HandlerRegistry) -> None:
        self._handlers.update(other._handlers)

    def __contains__(self, name: object) -> bool:
        return name in self._handlers

    def __len__(self) -> int:
        return len(self._handlers)


# Decorated handlers by defining module name: filled at import, read by load_handlers.
_DECORATED: dict[str, list[tuple[str, Handler]]] = {}


def handler(name: str) -> Callable[[Handler], Handler]:
    """Mark ``fn`` as the handler of event facet ``name`` (picked up by :func:`load_handlers`)."""

    def mark(fn: Handler) -> Handler:
        module = getattr(fn, "__module__", None) or "__main__"
        _DECORATED.setdefault(module, []).append((name, fn))
        return fn

    return mark


def is_async_handler(fn: Handler) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__)


def register_module(module: ModuleType, registry: HandlerRegistry) -> int:
    """Register a module's decorated handlers, then call its ``register_handlers``; returns how many were added."""
    before = set(registry.names())
    name = module.__name__
    for mod_name, entries in list(_DECORATED.items()):
        if mod_name == name or (_is_package(module) and mod_name.startswith(name + ".")):
            for facet, fn in entries:
                registry.register(facet, fn)
    hook = getattr(module, "register_handlers", None)
    if callable(hook):
        hook(registry)
    return len(set(registry.names()) - before)


def _is_package(module: ModuleType) -> bool:
    return hasattr(module, "__path__")


def _import_file(path: Path) -> ModuleType:
    """Import a .py file under a name unique to its path, so two ``handlers.py`` never clash."""
    path = path.resolve()
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:10]
    mod_name = f"ffl_handlers_{path.stem}_{digest}"
    if mod_name in sys.modules:
        return sys.modules[mod_name]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise HandlerLoadError(f"cannot import handlers from {path}")
    module = importlib.util.module_from_spec(spec)
    # The file's folder goes on sys.path so it can import its sibling modules.
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.append(folder)
    sys.modules[mod_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(mod_name, None)
        raise HandlerLoadError(f"importing handlers {path} failed: {type(exc).__name__}: {exc}") from exc
    return module


def _modules_for(spec: str) -> list[ModuleType]:
    path = Path(spec)
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            raise HandlerLoadError(f"no .py files in handler directory {spec}")
        return [_import_file(p) for p in files]
    if path.is_file():
        return [_import_file(path)]
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        raise HandlerLoadError(f"handler file or directory not found: {spec}")
    # Like ``python -m``, a module name resolves against the working directory too.
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())
    try:
        return [importlib.import_module(spec)]
    except ImportError as exc:
        raise HandlerLoadError(f"cannot import handler module {spec!r}: {exc}") from exc


def load_handlers(specs: str | Iterable[str], registry: HandlerRegistry | None = None) -> HandlerRegistry:
    """Import each spec (module, package, .py file or directory) and register its handlers.

    Returns the registry (a new one unless given). A spec that registers nothing is
    an error: it is almost always a wrong path or a forgotten decorator.
    """
    registry = registry if registry is not None else HandlerRegistry()
    for spec in [specs] if isinstance(specs, str) else list(specs):
        modules = _modules_for(spec)
        added = sum(register_module(m, registry) for m in modules)
        if added == 0 and not any(_module_declares(m) for m in modules):
            raise HandlerLoadError(
                f"{spec} registers no handlers (use @handler(\"ns.Facet\") or define register_handlers(registry))"
            )
    return registry


def _module_declares(module: ModuleType) -> bool:
    """Whether the module has any handler (possibly re-registering names already present)."""
    return callable(getattr(module, "register_handlers", None)) or any(
        m == module.__name__ or m.startswith(module.__name__ + ".") for m in _DECORATED
    )
