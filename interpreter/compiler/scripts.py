"""Static reading of script code: which ``result`` keys it sets, when that can be told."""

from __future__ import annotations

import re

_RESULT = re.compile(r"\bresult\b")
_ASSIGN = re.compile(r"""\bresult\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]\s*=(?!=)""")


def result_keys(code: str) -> list[str] | None:
    """Keys assigned as ``result["k"] = ...``, or None if ``result`` is used any other way.

    None means "cannot tell": callers then accept any key rather than report
    errors a human would consider false.
    """
    keys: list[str] = []
    assigned = list(_ASSIGN.finditer(code))
    if len(assigned) != len(_RESULT.findall(code)):
        return None
    for match in assigned:
        key = match.group(1) if match.group(1) is not None else match.group(2)
        if key not in keys:
            keys.append(key)
    return keys
