"""The RunScript activity: FFL ``script`` code runs here, never inside the workflow.

Scripts are user Python: they run with two dicts, ``params`` (read) and
``result`` (written), in a worker thread so a slow script does not stall the
worker's event loop. A failure keeps the script's exception type so FFL
``catch`` sees e.g. ``ZeroDivisionError``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from ..program.constants import RUN_SCRIPT_ACTIVITY


def run_script(code: str, params: dict[str, Any], step: str = "") -> dict[str, Any]:
    """Execute ``code`` with ``params`` and return the ``result`` dict it filled (JSON-checked)."""
    result: dict[str, Any] = {}
    where = f"script of step '{step}'" if step else "script"
    try:
        exec(compile(code, f"<{where}>", "exec"), {"params": dict(params), "result": result})  # noqa: S102
    except Exception as err:  # noqa: BLE001 - any script error becomes an FFL step failure
        raise ApplicationError(f"{where} failed: {type(err).__name__}: {err}", type=type(err).__name__,
                               non_retryable=True) from err
    try:
        return json.loads(json.dumps(result))
    except (TypeError, ValueError) as err:
        raise ApplicationError(f"{where} set a result that is not JSON: {err}", type="TypeError",
                               non_retryable=True) from err


@activity.defn(name=RUN_SCRIPT_ACTIVITY)
async def run_script_activity(request: dict[str, Any]) -> dict[str, Any]:
    """``{"code", "params", "step"}`` → the script's ``result``."""
    return await asyncio.to_thread(run_script, request["code"], request.get("params") or {},
                                   request.get("step", ""))
