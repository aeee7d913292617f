"""What a resumed run starts from, built from values: the starter's ``ffl_resume`` entry, checked, and the
``Continuation`` made of the closed run's recovery answer (resume.py reads both from Temporal).

Failed steps and failed children are dropped from the memo (memo.kept_on_resume); so is every step at or
under a ``from`` path. The snapshot and the counts of what earlier runs completed go along only for a plain
resume: with paths to run again or another program, each call is checked by its digest instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from interpreter.program.constants import MEMO_RESUME

from .memo import Continuation, kept_on_resume
from .trust_checks import refused


@dataclass(frozen=True)
class ResumeMarker:
    """What a starter of a resumed run chose: which closed run of this workflow id, which paths to run again."""

    run: str
    again: tuple[str, ...] = ()
    program: str = ""  # the program hash to go on with (``--program``), else the closed run's


def resume_marker(value: Any, run_id: str) -> ResumeMarker | None:
    """The ``ffl_resume`` memo entry of run ``run_id`` (None: it resumes nothing), refused unless well formed."""
    if value is None:
        return None
    run = value.get("run") if isinstance(value, dict) else None
    again = value.get("from", []) if isinstance(value, dict) else None
    program = value.get("program", "") if isinstance(value, dict) else None
    if not isinstance(run, str) or not run or not isinstance(again, list) or not isinstance(program, str) \
            or not all(isinstance(path, str) and path for path in again):
        raise refused(f"memo '{MEMO_RESUME}' must be {{\"run\": RUN_ID, \"from\": [PATH, ...], \"program\": "
                      f"HASH}}, got {str(value)[:200]}", "InvalidResume")
    if run == run_id:
        raise refused("a run cannot resume itself", "InvalidResume")
    return ResumeMarker(run, tuple(again), program)


def resumed_run(answer: dict[str, Any], resume: ResumeMarker) -> Continuation:
    """The Continuation a resumed run starts from: the closed run's recovery answer, as its starter chose."""
    other_program = bool(resume.program) and resume.program != answer["program_hash"]
    plain = not resume.again and not other_program  # a snapshot's units are not checked call by call
    return Continuation(
        memo=kept_on_resume(answer["memo"], resume.again, other_program), seq=answer["seq"], run_id=answer["run_id"],
        program_hash=resume.program or answer["program_hash"], config=answer["config"], runs=answer["runs"] + 1,
        signals=answer.get("signals"), previous_run=resume.run, recovered_children=answer["children"],
        again=sorted(resume.again), snapshot=answer.get("snapshot") if plain else None,
        earlier=answer.get("earlier") if plain else None)


def check_recovered_child(recover: list[str], root_id: str) -> None:
    """A child recovers [workflow id, run id] of a closed child of its own logical run, nothing else."""
    if len(recover) != 2 or not recover[0].startswith(root_id + "/"):
        raise refused(f"a child recovers only a child of its own run, not {str(recover)[:200]}", "UntrustedChild")


def resumed_chunk(answer: dict[str, Any], again: list[str], seq: int, root_run: str, program_hash: str,
                  config: dict[str, Any]) -> Continuation:
    """A child of a resumed run: the completed iterations of the closed child's recovery answer."""
    other_program = answer["program_hash"] != program_hash
    plain = not again and not other_program
    return Continuation(memo=kept_on_resume(answer["memo"], tuple(again), other_program), seq=seq, run_id=root_run,
                        program_hash=program_hash, config=config, recovered_children=answer["children"],
                        again=sorted(again), snapshot=answer.get("snapshot") if plain else None,
                        earlier=answer.get("earlier") if plain else None)
