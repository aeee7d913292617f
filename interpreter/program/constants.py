"""Names shared by every runtime layer: queues, activity types, memo keys, query names.

Pure constants so the compiler, the workflow, the activities and the entry
points agree without importing each other.
"""

from __future__ import annotations

INTERPRETER_QUEUE = "ffl"
"""Task queue of the interpreter workflow and its own activities."""

LOAD_PROGRAM_ACTIVITY = "ffl.LoadProgram"
RUN_SCRIPT_ACTIVITY = "ffl.RunScript"
MIRROR_ACTIVITY = "ffl.Mirror"
TICK_ACTIVITY = "ffl.Tick"

CHUNK_WORKFLOW = "ffl.Iterations"
"""Workflow type of a child workflow running a slice of a large foreach's iterations (the interpreter itself)."""

MEMO_PROGRAM_HASH = "ffl_program_hash"
"""Memo key holding the content hash of the program a run executes."""

STEPS_QUERY = "steps"
"""Query name returning the run's steps: path, facet, state, returns, error."""

SIGNALS_QUERY = "signals"
WARNINGS_QUERY = "warnings"
"""The run's warnings (values passed on under ``type_checks: warn``), oldest first: ``[{"path", "message"}]``."""
"""Query name returning the signals a run received (and what became of each), who waits on which name."""

RECOVER_ACTIVITY = "ffl.Recover"
"""The interpreter's activity a resumed run (or child) reads its predecessor's completed results with."""
RECOVERY_QUERY = "ffl.recovery"
"""Query name answering what a run completed (its memo) and what it needs to be resumed; on a closed run too."""
MEMO_RESUME = "ffl_resume"
"""Memo key of a resumed run: ``{"run": <the closed run it resumes>, "from": [paths to run again]}`` (its lineage)."""
MEMO_MIGRATED = "ffl_migrated"
"""Memo key of a run moved onto another program by ``ffl migrate``: ``{"from": <hash>, "to": <hash>}``."""
MIGRATE_UPDATE = "ffl.migrate"
"""Update name asking a running run to move onto the program hash it names at its next safe point."""
