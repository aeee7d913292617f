"""The mirror's schema as docs/mirror.md writes it down: its tables, parsed.

docs/mirror.md is the one place the schema is written: its field tables
(one per collection, under "## Schema"), its index table and its lifecycle
table. The tests compare the code and the checks of ``schema_checks`` with
what is parsed here, so the document, the fixture and the code cannot drift
apart. The file is read when a function is called, never at import.
"""

from __future__ import annotations

import re

from tests.paths import REPO

MIRROR_DOC = REPO / "docs" / "mirror.md"


def _section(heading: str) -> list[str]:
    lines = MIRROR_DOC.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"## {heading}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start + 1 : end]


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _tables(lines: list[str]) -> dict[str, list[list[str]]]:
    """Each table's body rows (header and separator left out), keyed by the ``###`` heading above it."""
    tables: dict[str, list[list[str]]] = {}
    heading, header_seen = "", False
    for line in lines:
        if line.startswith("### "):
            heading, header_seen = line[4:].strip(), False
        elif line.startswith("|"):
            if not header_seen:
                header_seen = True
            elif not re.fullmatch(r"\|[\s\-|:]+\|", line.strip()):
                tables.setdefault(heading, []).append(_cells(line))
        else:
            header_seen = False
    return tables


def documented_fields() -> dict[str, dict[str, str]]:
    """collection → field → type label, from the field tables under "## Schema"."""
    return {name: {row[0]: row[1] for row in rows}
            for name, rows in _tables(_section("Schema")).items() if name != "Indexes"}  # fmt: skip


def documented_indexes() -> set[tuple]:
    """(collection, name, keys, unique, partial filter items or None) of every documented index."""
    found = set()
    for collection, name, keys, options in _tables(_section("Schema"))["Indexes"]:
        parts = [p.strip() for p in options.split(",") if p.strip()]
        partial = None
        for part in parts:
            match = re.fullmatch(r"partial (\S+) = (\S+)", part)
            if match:
                partial = ((match.group(1), match.group(2)),)
        found.add((collection, name, tuple(k.strip() for k in keys.split(",")), "unique" in parts, partial))
    return found


def documented_lifecycles() -> dict[str, tuple[str, str | None]]:
    """lifecycle → (state of root and call steps, state of blocks or None), from the lifecycle table."""
    lines = _section("Steps: lifecycle, states, object types and containers")
    rows = [_cells(line) for line in lines if line.startswith("| ") and not line.startswith("| lifecycle")]
    table = {}
    for row in rows:
        if len(row) == 4 and row[2].startswith("`state."):
            block = row[3].strip("`")
            table[row[0]] = (row[2].strip("`"), block if block.startswith("state.") else None)
    return table
