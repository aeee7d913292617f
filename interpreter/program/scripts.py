"""What RunScript is asked: a script by program hash and id, never code from the caller.

The workflow sends a ``ScriptRequest``; the activity loads the program by its
hash from its own store (verifying the hash) and runs the script with that
id. The compiler gives each script its id (``assign_script_ids``): where it
stands — ``ns.F/script`` for a pre-script, ``ns.F/b1`` for the second
``andThen`` block of ``ns.F`` when it is a script, ``<step id>/b0`` for a
script tail of a step. It depends only on the program's text, so it is
stable for a given program hash; programs compiled before scripts had ids
get the same ids when they are read (``with_script_ids``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Block, Program, Script, Step
from .walk import Address, blocks_of, walk


@dataclass
class ScriptRequest:
    """The RunScript activity's input."""

    program_hash: str
    workflow: str
    script_id: str
    params: dict[str, Any] = field(default_factory=dict)
    step: str = ""


def assign_script_ids(program: Program) -> None:
    """Fill ``Script.id`` of every script in ``program`` (in place).

    A script's id is its block's place written with the step's own id where the compiler gave one
    (``ns.F/b0/s1/b0``), else the step's name: what releases before walk.py's addresses wrote."""
    for qname, decl in program.facets.items():
        if decl.script is not None:
            decl.script.id = f"{qname}/script"
        places: dict[Address, str] = {}
        for address, node in walk(decl):
            above = places.get(address.parent, qname)
            if isinstance(node, Step):
                places[address] = node.id or f"{above}/{node.name}"
            elif isinstance(node, Block):
                places[address] = f"{above}/{address.last}"
                if node.script is not None:
                    node.script.id = places[address]


def with_script_ids(program: Program) -> Program:
    """``program`` with every script's id filled (programs compiled before ids existed have none)."""
    scripts = _all_scripts(program)
    if any(not script.id for script in scripts):
        assign_script_ids(program)
    return program


def _all_scripts(program: Program) -> list[Script]:
    found = []
    for decl in program.facets.values():
        if decl.script is not None:
            found.append(decl.script)
        found.extend(block.script for _, block in blocks_of(decl) if block.script is not None)
    return found


def scripts_of(program: Program) -> dict[str, str]:
    """Script id → code, for every script of ``program``."""
    return {script.id: script.code for script in _all_scripts(with_script_ids(program))}


def script_origins(program: Program) -> dict[str, str]:
    """Script id → ``file.ffl:LINE`` of its ``script`` keyword, where the program kept its source places: the name
    Python's messages give the script (a name without ``/``, which Python's SyntaxError would cut)."""
    return {script.id: f"{script.loc.file.rsplit('/', 1)[-1]}:{script.loc.line}"
            for script in _all_scripts(with_script_ids(program)) if script.loc is not None and script.loc.file}
