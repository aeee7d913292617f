"""Waiting for a mirror to drain without timing the MongoDB behind it."""

from __future__ import annotations

from interpreter.activities.mirror import MirrorSession


def drain_and_close(session: MirrorSession, stall: float = 30.0) -> bool:
    """Close ``session`` once every record it holds is in MongoDB; False only if its writer stops making progress.

    A fixed deadline would time secantusdb, whose records/s vary threefold
    between machines of this kind (benchmarks/mirror_bench.py: the same
    writer gave 252 records/s on one, 87-91 on another). What a test asserts
    is that everything arrives; how fast is the benchmark's business.
    """
    writer = session.writer
    while True:
        before = writer.written
        if writer.flush(stall):
            return session.close(stall)
        if writer.written == before:  # nothing reached MongoDB for ``stall`` seconds
            session.close(1.0)
            return False
