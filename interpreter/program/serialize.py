"""Canonical JSON for compiled programs: byte-identical for identical input."""

from __future__ import annotations

import hashlib
import json

from .model import FORMAT_VERSION, Program


class ProgramFormatError(ValueError):
    """A compiled program whose format this interpreter does not read."""


def program_to_json(program: Program) -> str:
    """Serialise with sorted keys and no insignificant whitespace."""
    data = program.model_dump(mode="json", exclude_none=True)
    data["format"] = program.format
    return canonical_json(data)


def canonical_json(data: dict) -> str:
    """A program's parsed JSON as its canonical text: the bytes ``program_to_json`` writes for it."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(program: Program) -> str:
    """SHA-256 of the canonical JSON: the program's identity in memos and mirrors."""
    return hashlib.sha256(program_to_json(program).encode("utf-8")).hexdigest()


def program_data(text: str | bytes | dict) -> dict:
    """A compiled program's parsed JSON, unvalidated, once its format is known to be this interpreter's."""
    data = json.loads(text) if isinstance(text, (str, bytes)) else text
    version = data.get("format")
    if version != FORMAT_VERSION:
        raise ProgramFormatError(
            f"compiled program has format {version!r}; this interpreter reads format {FORMAT_VERSION}"
        )
    return data


def program_from_json(text: str | bytes | dict) -> Program:
    return Program.model_validate(program_data(text))
