"""The process one FFL script runs in: ``python -I script_child.py``, its request as JSON on stdin.

Standard library only, and nothing runs on import: the worker starts this
file by path in a fresh interpreter (isolated mode: no ``PYTHON*`` variables,
no user site, no current directory on ``sys.path``), in an empty temporary
working directory with a scrubbed environment. Before the script runs, the
process limits itself — address space (``memory_mb``), CPU seconds, no core
files — and points file descriptor 1 at standard error, so a script's
``print`` goes to the worker's log while the answer travels on a private
copy of the original standard output: one JSON line, either
``{"result": {...}}`` or ``{"error": type name, "message": text}``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import traceback

RESULT_LIMIT = 2 * 1024 * 1024
"""Bytes of JSON a script's result may have (Temporal's payload limit)."""


def _limit(kind: int, value: int) -> None:
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, hard))


def _answer(channel, data: dict) -> None:
    channel.write(json.dumps(data, allow_nan=False))
    channel.flush()


def _script_frames(tb):
    """The traceback from the script's own first frame: this file's frames are the runner, not the user's code
    (a syntax error has none left: only its place in the script is shown)."""
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    return tb


def main() -> int:
    request = json.loads(sys.stdin.read())
    answer = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # print() in the script goes to standard error
    sys.stdout = sys.stderr
    _limit(resource.RLIMIT_AS, int(request["memory_mb"]) * 1024 * 1024)
    _limit(resource.RLIMIT_CPU, int(request["cpu_seconds"]))
    _limit(resource.RLIMIT_CORE, 0)
    result: dict = {}
    try:
        code = compile(request["code"], request.get("origin") or "<ffl script>", "exec")
        exec(code, {"__name__": "__ffl_script__", "params": request.get("params") or {}, "result": result})  # noqa: S102
    except MemoryError:
        _answer(answer, {"error": "MemoryError", "message": f"used more than {request['memory_mb']} MB of memory"})
        return 0
    except BaseException as err:  # noqa: BLE001 - any script error (SystemExit too) is the step's failure
        traceback.print_exception(type(err), err, _script_frames(err.__traceback__))
        _answer(answer, {"error": type(err).__name__, "message": str(err) or type(err).__name__})
        return 0
    try:
        text = json.dumps({"result": result}, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        _answer(answer, {"error": "TypeError", "message": f"set a result that is not JSON: {err}"})
        return 0
    if len(text) > RESULT_LIMIT:
        _answer(answer, {"error": "PayloadTooLarge",
                         "message": f"set a result of {len(text)} bytes of JSON; at most {RESULT_LIMIT} fit"})
        return 0
    answer.write(text)
    answer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
