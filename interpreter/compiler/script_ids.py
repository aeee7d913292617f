"""Every script gets an id, unique in its program, so RunScript is asked for a script by id, never sent code.

The id is where the script stands: ``ns.F/script`` for a pre-script,
``ns.F/b1`` for the second ``andThen`` block of ``ns.F`` when it is a script,
``<step id>/b0`` for a script tail of a step. It depends only on the
program's text, so it is stable for a given program hash.
"""

from __future__ import annotations

from ..program.model import Block, Program


def _blocks(blocks: list[Block], prefix: str) -> None:
    for index, block in enumerate(blocks):
        _block(block, f"{prefix}/b{index}")


def _block(block: Block, path: str) -> None:
    if block.script is not None:
        block.script.id = path
    for step in block.steps:
        step_path = step.id or f"{path}/{step.name}"
        _blocks(step.blocks, step_path)
        if step.catch is not None:
            _block(step.catch.block, f"{step_path}/catch")
    for index, case in enumerate(block.cases):
        _block(case.body, f"{path}/c{index}")


def assign_script_ids(program: Program) -> None:
    """Fill ``Script.id`` of every script in ``program`` (in place)."""
    for qname, decl in program.facets.items():
        if decl.script is not None:
            decl.script.id = f"{qname}/script"
        _blocks(decl.blocks, qname)
        if decl.catch is not None:
            _block(decl.catch.block, f"{qname}/catch")
