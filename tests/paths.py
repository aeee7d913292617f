"""Where the project's shared documents are: ``shared/`` beside the checkout (CI lays it there too)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("FFL_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance"
SEEDS = SHARED / "seeds"
