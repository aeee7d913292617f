"""Live progress of a run on a terminal: elapsed time, step counts, retries and waits.

Each refresh reads the same ``RunView`` as ``ffl status`` (the steps query
plus the pending activities' attempts, last errors and queues' pollers), so
the status line can say ``attempt 2 of 3, last error: …`` or ``waiting for a
worker on queue osm`` instead of a bare "running".
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.markup import escape

from ..program.display import readable_path, short_name, shorten
from .run_view import RunView, fetch_view
from .status_view import counts_line, run_counts, step_rows


def elapsed_text(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def progress_line(view: RunView, elapsed: float, width: int = 160) -> str:
    """One status line: elapsed, counts, then the most telling step (retrying, waiting, else running)."""
    rows = step_rows(view)
    text = f"{view.workflow} {elapsed_text(elapsed)} · {counts_line(run_counts(view, rows))}"
    root = short_name(view.workflow)
    retrying = [r for r in rows if (r.get("attempt") or 1) > 1 and r["display"] in ("running", "waiting")]
    waits = [r for r in rows if r["display"] == "waiting" and r.get("waiting")]  # timers, signals: not workers
    waiting = [r for r in rows if r["display"] == "waiting" and not r.get("waiting")]
    running = [r for r in rows if r["display"] == "running"]
    if retrying:
        row = retrying[0]
        text += f" · {row.get('facet')} at {readable_path(row['path'], root)}: {row['detail']}"
    elif waits:
        row = waits[0]
        more = f" (and {len(waits) - 1} more waits)" if len(waits) > 1 else ""
        text += f" · {readable_path(row['path'], root)}{more}: {row['detail']}"
    elif waiting:
        queues = sorted({str(r.get("queue")) for r in waiting if "no worker" in r.get("detail", "")})
        if queues:
            text += f" · {len(waiting)} waiting, no worker polling queue {', '.join(queues)}"
        else:
            text += f" · {len(waiting)} waiting for a worker"
    elif running:
        row = running[-1]
        text += f" · {row.get('facet')} at {readable_path(row['path'], root)}"
    return shorten(text, width)


async def show_progress(client, handle, console, started: float, interval: float = 1.0) -> None:
    """Refresh a rich status line until cancelled.

    The clock moves every ``interval`` even while a read of the run takes longer (the steps query waits
    for a long workflow task): the line shows the last view read, with the time now.
    """
    view: RunView | None = None
    reading: asyncio.Task | None = None
    with console.status(f"{handle.id} starting", spinner="dots") as status:
        try:
            while True:
                if reading is None:
                    reading = asyncio.ensure_future(fetch_view(client, handle, query_timeout=5.0, outcome=False))
                await asyncio.wait({reading}, timeout=interval)
                if reading.done():
                    if not reading.cancelled() and reading.exception() is None:  # else: not started yet, or
                        view = reading.result()                                    # finished between polls
                    reading = None
                elapsed = time.monotonic() - started
                status.update(escape(progress_line(view, elapsed, console.width - 4) if view is not None
                                     else f"{handle.id} {elapsed_text(elapsed)} starting"))
                if reading is None:
                    await asyncio.sleep(interval)
        finally:
            if reading is not None:
                reading.cancel()


async def print_final_counts(client, handle, console, started: float) -> None:
    """The run's final step counts and how long it took, in green (red when a step failed)."""
    with contextlib.suppress(Exception):
        view = await fetch_view(client, handle, query_timeout=5.0, outcome=False)
        if view.steps_error:  # counts read from history miss local activities: no line rather than "0 done"
            return
        final = run_counts(view)
        style = "red" if final["failed"] else "green"
        console.print(f"[{style}]{escape(handle.id)}: {counts_line(final)} "
                      f"in {elapsed_text(time.monotonic() - started)}[/{style}]")
