"""What RunScript is asked: a script by program hash and id, never code from the caller.

The workflow sends a ``ScriptRequest``; the activity loads the program by its
hash from its own store (verifying the hash) and runs the script with that
id (ids are given by the compiler, see ``Script.id``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Block, Program


@dataclass
class ScriptRequest:
    """The RunScript activity's input."""

    program_hash: str
    workflow: str
    script_id: str
    params: dict[str, Any] = field(default_factory=dict)
    step: str = ""


def scripts_of(program: Program) -> dict[str, str]:
    """Script id → code, for every script of ``program``."""
    found: dict[str, str] = {}
    pending: list[Block] = []
    for decl in program.facets.values():
        if decl.script is not None:
            found[decl.script.id] = decl.script.code
        pending.extend(decl.blocks)
        if decl.catch is not None:
            pending.append(decl.catch.block)
    while pending:
        block = pending.pop()
        if block.script is not None:
            found[block.script.id] = block.script.code
        for step in block.steps:
            pending.extend(step.blocks)
            if step.catch is not None:
                pending.append(step.catch.block)
        pending.extend(case.body for case in block.cases)
    return found
