"""Files only their owner can read: program registries and mirror spools may hold secrets of the runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) readable by the owner only; an existing directory is left as it is."""
    missing = []
    current = path
    while not current.exists():
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    return path


def open_private(path: Path, mode: str = "a+", encoding: str = "utf-8") -> IO:
    """Open (creating it with mode 0600) a text file only its owner can read or write."""
    flags = os.O_RDWR | os.O_CREAT | (os.O_APPEND if "a" in mode else 0)
    return os.fdopen(os.open(path, flags, 0o600), mode, encoding=encoding)
