"""Handler registry: which Python function answers which event facet.

Handlers are plain functions ``f(payload: dict) -> dict`` (or ``async def``).
A module registers them in any of the ways the original FFL runtime's
packages do, so those packages load unchanged:

- the ``@handler("ns.Facet")`` decorator, recorded per defining module, so
  :func:`load_handlers` can pick a module's handlers up even when the module
  was imported earlier;
- an entry point called with the registry — ``register_handlers``,
  ``register_all_registry_handlers`` or ``register_all_handlers`` (the first
  one the module has), else every ``register_<area>_handlers`` it exports —
  which calls either ``registry.register("ns.Facet", fn)`` (poller style) or
  ``registry.register_handler(facet_name=..., module_uri=..., entrypoint=...)``
  (registry-runner style: the function is named, imported here at load).

A spec for :func:`load_handlers` is an importable module/package name, a
``.py`` file, a package directory or a directory of ``.py`` files (see
handler_imports).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NoReturn

from .handler_imports import HandlerLoadError, import_module_uri, import_spec

Handler = Callable[[dict], Any]
"""``f(payload) -> dict`` or an ``async def`` returning a dict."""

DEFAULT_QUEUE = "default"
ENTRY_POINTS = ("register_handlers", "register_all_registry_handlers", "register_all_handlers")
"""Module functions called with the registry, in order of preference (the first one found is called)."""
_AREA_ENTRY_POINT = re.compile(r"register_\w+_handlers")

__all__ = ["CompleteLater", "HandlerLoadError", "HandlerRegistry", "NonRetryableError", "Registration",
           "complete_later", "handler", "load_handlers", "queue_for"]  # fmt: skip


class NonRetryableError(Exception):
    """Raise (or subclass) in a handler to fail the step without further retries."""


class CompleteLater(Exception):  # noqa: N818 - it says what the handler wants, it is no error
    """Raise in a handler that has handed its work to an outside system: the step stays open.

    The step completes when something calls ``ffl complete TASK_TOKEN JSON`` (or
    fails with ``ffl fail TASK_TOKEN MESSAGE``), from any process, with the
    token the handler found in ``payload["_task_token"]`` (Temporal's
    asynchronous activity completion). The facet needs timeouts that leave the
    outside system its time: ``with ffl.Timeout(start_to_close_seconds = ...,
    heartbeat_seconds = 0)``.
    """


def complete_later(reason: str = "") -> NoReturn:
    """``raise CompleteLater(reason)``: the step completes later, through its ``payload["_task_token"]``."""
    raise CompleteLater(reason)


@dataclass(frozen=True)
class Registration:
    """One facet's handler and what its registration said about it.

    ``timeout_ms`` (registry-runner style) becomes the facet's start-to-close
    timeout unless a worker's ``facet_retry`` configuration sets one;
    ``metadata`` reaches the handler as ``payload["_handler_metadata"]``.
    """

    facet: str
    fn: Handler
    module_uri: str | None = None
    entrypoint: str | None = None
    version: str | None = None
    checksum: str | None = None
    timeout_ms: int | None = None
    requirements: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

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
    """Facet qualified name → Registration. Registering one name twice keeps the last, like a dict.

    It is the object handed to a package's entry point, so it offers both the
    original runtime's poller method ``register`` and its registry-runner
    method ``register_handler``.
    """

    def __init__(self) -> None:
        self._registrations: dict[str, Registration] = {}

    def register(self, name: str, fn: Handler) -> Handler:
        if not isinstance(name, str) or not name:
            raise ValueError(f"handler name must be a non-empty string, got {name!r}")
        if not callable(fn):
            raise TypeError(f"handler for {name} is not callable: {fn!r}")
        self._registrations[name] = Registration(name, fn)
        return fn

    def register_handler(
        self,
        facet_name: str,
        module_uri: str,
        entrypoint: str = "handle",
        version: str | None = None,
        checksum: str | None = None,
        timeout_ms: int | None = None,
        requirements: Iterable[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """Register the function ``entrypoint`` of ``module_uri`` (a module path or ``file://`` path).

        The module is imported now, so a wrong name fails the worker at start
        with a message naming the facet, module and entrypoint.
        """
        if not isinstance(facet_name, str) or not facet_name:
            raise ValueError(f"facet_name must be a non-empty string, got {facet_name!r}")
        fn = _entrypoint(facet_name, module_uri, entrypoint)
        if timeout_ms is not None and (isinstance(timeout_ms, bool) or not isinstance(timeout_ms, (int, float))
                                       or timeout_ms < 0):
            raise ValueError(f"timeout_ms of {facet_name} must be a number of milliseconds, got {timeout_ms!r}")
        self._registrations[facet_name] = Registration(
            facet_name, fn, module_uri=module_uri, entrypoint=entrypoint, version=version, checksum=checksum,
            timeout_ms=int(timeout_ms) if timeout_ms else None, requirements=tuple(requirements or ()),
            metadata=dict(metadata or {}),
        )  # fmt: skip

    def lookup(self, name: str) -> Handler | None:
        found = self._registrations.get(name)
        return found.fn if found is not None else None

    def registration(self, name: str) -> Registration | None:
        return self._registrations.get(name)

    def timeouts(self) -> dict[str, float]:
        """Facet → start-to-close seconds its registration asked for (``timeout_ms``), sorted by facet."""
        return {n: r.timeout_ms / 1000 for n, r in sorted(self._registrations.items()) if r.timeout_ms}

    def names(self, queue: str | None = None, overrides: Mapping[str, str] | None = None) -> list[str]:
        """Registered facet names, sorted; only those on ``queue`` when given."""
        return sorted(n for n in self._registrations if queue is None or queue_for(n, overrides) == queue)

    def queues(self, overrides: Mapping[str, str] | None = None) -> list[str]:
        return sorted({queue_for(n, overrides) for n in self._registrations})

    def update(self, other: HandlerRegistry) -> None:
        self._registrations.update(other._registrations)

    def __contains__(self, name: object) -> bool:
        return name in self._registrations

    def __len__(self) -> int:
        return len(self._registrations)


def _entrypoint(facet: str, module_uri: str, entrypoint: str) -> Handler:
    """The function a registry-runner registration names; a clear error when it is not there."""
    where = f"handler of {facet}: module_uri {module_uri!r}, entrypoint {entrypoint!r}"
    try:
        module = import_module_uri(module_uri)
    except HandlerLoadError as exc:
        raise HandlerLoadError(f"{where}: {exc}") from exc
    fn = getattr(module, entrypoint, None)
    if fn is None:
        raise HandlerLoadError(f"{where}: the module has no attribute {entrypoint!r}")
    if not callable(fn):
        raise HandlerLoadError(f"{where}: {entrypoint!r} is not callable ({type(fn).__name__})")
    return fn


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


def entry_points(module: ModuleType) -> list[Callable]:
    """The registration functions of ``module``: the first of ENTRY_POINTS, else its area functions."""
    for name in ENTRY_POINTS:
        hook = getattr(module, name, None)
        if callable(hook):
            return [hook]
    found: list[Callable] = []
    for name in sorted(vars(module)):
        hook = getattr(module, name)
        if _AREA_ENTRY_POINT.fullmatch(name) and callable(hook) and hook not in found:
            found.append(hook)
    return found


def register_module(module: ModuleType, registry: HandlerRegistry) -> int:
    """Register a module's decorated handlers, then call its entry points; returns how many were added."""
    before = set(registry.names())
    name = module.__name__
    for mod_name, entries in list(_DECORATED.items()):
        if mod_name == name or (_is_package(module) and mod_name.startswith(name + ".")):
            for facet, fn in entries:
                registry.register(facet, fn)
    for hook in entry_points(module):
        try:
            hook(registry)
        except HandlerLoadError:
            raise
        except Exception as exc:
            raise HandlerLoadError(f"{name}.{hook.__name__}(registry) failed: {type(exc).__name__}: {exc}") from exc
    return len(set(registry.names()) - before)


def _is_package(module: ModuleType) -> bool:
    return hasattr(module, "__path__")


def load_handlers(specs: str | Iterable[str], registry: HandlerRegistry | None = None) -> HandlerRegistry:
    """Import each spec (module, package, .py file or directory) and register its handlers.

    Returns the registry (a new one unless given). A spec that registers nothing is
    an error: it is almost always a wrong path or a forgotten decorator.
    """
    registry = registry if registry is not None else HandlerRegistry()
    for spec in [specs] if isinstance(specs, str) else list(specs):
        modules = import_spec(spec)
        added = sum(register_module(m, registry) for m in modules)
        if added == 0 and not any(_module_declares(m) for m in modules):
            raise HandlerLoadError(
                f"{spec} registers no handlers (use @handler(\"ns.Facet\") or define register_handlers(registry))"
            )
    return registry


def _module_declares(module: ModuleType) -> bool:
    """Whether the module has any handler (possibly re-registering names already present)."""
    return bool(entry_points(module)) or any(
        m == module.__name__ or m.startswith(module.__name__ + ".") for m in _DECORATED
    )
