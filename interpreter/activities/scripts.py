"""The RunScript activity: an FFL ``script`` runs in a process of its own, on workers that allow it.

Scripts are user Python. They run only on interpreter workers started with
``--allow-scripts``; elsewhere RunScript fails the step at once, naming the
flag. The activity accepts a program hash and a script id — never code —
loads that program from its own store (which verifies the hash) and runs the
script with that id, so a Temporal client can only run scripts that were
published.

Each script gets a fresh ``python -I`` process (``script_child.py``) with a
time limit (``ScriptConfig.timeout_seconds``, default 30 s, then SIGKILL of
its process group), an address-space limit (``memory_mb``), a scrubbed
environment and an empty temporary working directory that is removed
afterwards; at most ``processes`` run at once per worker. The worker's
event loop only waits on pipes, so it stays responsive while scripts run,
and a worker shutting down kills its scripts (their steps are retried on
another worker). This is isolation against accidents — a runaway loop, a
memory leak, a stray ``os.chdir`` — not a sandbox for hostile code: the
process runs as the worker's user and can read what that user can read.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..program.config import ScriptConfig
from ..program.constants import RUN_SCRIPT_ACTIVITY
from ..program.scripts import ScriptRequest, script_origins, scripts_of
from ..program.serialize import program_from_json
from ..program.values import scan_json
from .program_store import ProgramStore, ProgramTampered

CHILD = Path(__file__).with_name("script_child.py")
ALLOW_FLAG = "--allow-scripts"
STDERR_KEPT = 64 * 1024
"""Bytes of a script's standard error kept for its failure message and the worker log."""
ANSWER_LIMIT = 4 * 1024 * 1024


def _fail(message: str, error_type: str, retryable: bool = False) -> ApplicationError:
    return ApplicationError(message, type=error_type, non_retryable=not retryable)


def scrubbed_environment(workdir: str) -> dict[str, str]:
    """The whole environment of a script: no secrets of the worker's, home and temp in its own directory."""
    return {"PATH": os.defpath, "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


async def _read_tail(stream: asyncio.StreamReader, keep: int) -> bytes:
    """Everything from ``stream``, keeping only its last ``keep`` bytes (a script may print without end)."""
    kept = b""
    while chunk := await stream.read(65536):
        kept = (kept + chunk)[-keep:]
    return kept


async def _read_bounded(stream: asyncio.StreamReader, limit: int) -> bytes:
    data = bytearray()
    while chunk := await stream.read(65536):
        data += chunk
        if len(data) > limit:
            raise _fail(f"script answer exceeds {limit} bytes", "PayloadTooLarge")
    return bytes(data)


def _kill(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


async def run_script_process(code: str, params: dict[str, Any], where: str, limits: ScriptConfig,
                             origin: str = "") -> dict[str, Any]:
    """Run ``code`` with ``params`` in a fresh limited process; its ``result``, or an ApplicationError.

    ``origin`` (``file.ffl:LINE``) is the name Python's own messages give the script."""
    request = json.dumps({"code": code, "params": params, "origin": origin, "memory_mb": limits.memory_mb,
                          "cpu_seconds": math.ceil(limits.timeout_seconds) + 1}).encode("utf-8")
    with tempfile.TemporaryDirectory(prefix="ffl-script-") as workdir:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-I", str(CHILD), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=workdir, env=scrubbed_environment(workdir), start_new_session=True,
        )  # fmt: skip
        try:
            async def exchange() -> tuple[bytes, bytes]:
                assert process.stdin and process.stdout and process.stderr
                process.stdin.write(request)
                await process.stdin.drain()
                process.stdin.close()
                out, err = await asyncio.gather(_read_bounded(process.stdout, ANSWER_LIMIT),
                                                _read_tail(process.stderr, STDERR_KEPT))
                await process.wait()
                return out, err

            try:
                out, err = await asyncio.wait_for(exchange(), limits.timeout_seconds)
            except TimeoutError:
                raise _fail(f"{where} ran longer than {limits.timeout_seconds:g} s and was stopped",
                            "ScriptTimeout") from None
        finally:
            if process.returncode is None:
                _kill(process)
                await process.wait()
    if err:
        activity.logger.info("%s wrote to standard error:\n%s", where, err.decode("utf-8", "replace"))
    if process.returncode and process.returncode < 0:
        name = signal.Signals(-process.returncode).name
        reason = " (its CPU time limit)" if name == "SIGXCPU" else ""
        raise _fail(f"{where} was killed by {name}{reason}", "ScriptCrashed")
    try:
        answer = json.loads(out) if out else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no answer"]
        raise _fail(f"{where} ended (exit {process.returncode}) without an answer: {tail[0]}", "ScriptCrashed")
    if "error" in answer:
        raise _fail(f"{where} failed: {answer['error']}: {answer.get('message', '')}", str(answer["error"]))
    problem = scan_json(out)
    if problem is not None:
        raise _fail(f"{where} set a result that {problem}", "ValueError")
    return answer["result"]


class ScriptRunner:
    """RunScript for one interpreter worker: its store, its limits, whether it allows scripts at all."""

    CACHED_PROGRAMS = 16

    def __init__(self, store: ProgramStore, limits: ScriptConfig, allowed: bool) -> None:
        self.store = store
        self.limits = limits
        self.allowed = allowed
        self._scripts: OrderedDict[str, tuple[dict[str, str], dict[str, str]]] = OrderedDict()  # code, origins
        self._slots: asyncio.Semaphore | None = None

    async def code(self, request: ScriptRequest) -> tuple[str, str]:
        """The code of the requested script and its origin, from the program published under the requested hash."""
        scripts = self._scripts.get(request.program_hash)
        if scripts is None:
            try:
                text, _ = await asyncio.to_thread(self.store.load, request.workflow, request.program_hash)
            except LookupError as err:
                raise _fail(str(err), "ProgramNotFound") from err
            except ProgramTampered as err:
                raise _fail(str(err), "ProgramTampered") from err
            program = program_from_json(text)
            scripts = self._scripts[request.program_hash] = scripts_of(program), script_origins(program)
            while len(self._scripts) > self.CACHED_PROGRAMS:
                self._scripts.popitem(last=False)
        code = scripts[0].get(request.script_id)
        if code is None:
            raise _fail(f"program {request.program_hash[:12]} has no script '{request.script_id}'", "ScriptNotFound")
        return code, scripts[1].get(request.script_id, "")

    async def run(self, request: ScriptRequest) -> dict[str, Any]:
        where = f"script of step '{request.step}'" if request.step else "script"
        if not self.allowed:
            raise _fail(f"{where}: scripts are disabled on this worker; start the interpreter worker with "
                        f"{ALLOW_FLAG} to run them", "ScriptsDisabled")
        code, origin = await self.code(request)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.limits.processes)
        async with self._slots:
            work = asyncio.ensure_future(run_script_process(code, request.params, where, self.limits, origin))
            shutdown = asyncio.ensure_future(activity.wait_for_worker_shutdown())
            try:
                await asyncio.wait({work, shutdown}, return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                work.cancel()
                raise
            finally:
                shutdown.cancel()
            if not work.done():  # the worker is stopping: end the script now, another worker retries the step
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
                raise _fail(f"{where} stopped: the worker is shutting down", "WorkerShutdown", retryable=True)
            return work.result()


def script_request(data: Any) -> ScriptRequest:
    """The request RunScript was sent, or a non-retryable refusal: code is never accepted, only a script's id."""
    fields = ("program_hash", "workflow", "script_id")
    if not isinstance(data, dict) or "code" in data or not all(isinstance(data.get(f), str) for f in fields):
        raise _fail(f"{RUN_SCRIPT_ACTIVITY} runs a script of a published program: it takes program_hash, workflow "
                    "and script_id (and params, step), never code", "InvalidScriptRequest")
    params = data.get("params") or {}
    if not isinstance(params, dict):
        raise _fail(f"{RUN_SCRIPT_ACTIVITY} params must be a record", "InvalidScriptRequest")
    return ScriptRequest(data["program_hash"], data["workflow"], data["script_id"], params, str(data.get("step", "")))


def build_run_script_activity(store: ProgramStore, limits: ScriptConfig, allowed: bool) -> Callable:
    runner = ScriptRunner(store, limits, allowed)

    @activity.defn(name=RUN_SCRIPT_ACTIVITY)
    async def run_script_activity(request: dict[str, Any]) -> dict[str, Any]:
        """A ``ScriptRequest`` (program hash, workflow, script id, params, step) → the script's ``result``."""
        return await runner.run(script_request(request))

    return run_script_activity
