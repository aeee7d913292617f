"""Screenshots of the Temporal Web UI showing FFL runs, to check that the UI reads like the program.

Runs scripts/ui_demo/shop.ffl on a fresh dev server with its Web UI, each case
twice — served by ``ffl run --address`` and started with ``temporal workflow
start`` on separate ``worker.py`` processes: a completed run (a foreach whose
iterations branch with when, a composed facet, a step that succeeds on its
third attempt), a failed one, and one waiting for a signal (then approved, so
its timer shows too). Photographs the run list, the list filtered by the
program's search attribute, each run's history (compact and timeline), the
waiting runs' details, and the run graph (``ffl status --graph``, rendered by
Graphviz when installed). Also prints every activity's and timer's summary
from the histories and ``ffl status`` of the waiting runs, so the check does
not depend on reading pixels alone.

Needs Debian's chromium (``apt-get install -y chromium``) and Playwright's
Python client (``.venv/bin/pip install playwright``; it drives the system
chromium, no browser download)::

    .venv/bin/python scripts/ui_screenshots.py [--out screenshots]

The PNGs land in ``screenshots/`` (ignored by git).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from interpreter.local import start_temporal  # noqa: E402

DEMO = ROOT / "scripts" / "ui_demo"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def ffl(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def temporal(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "temporal"), *args], capture_output=True, text=True,
                          timeout=60)


def ffl_run(address: str, workflow: str, items: list[str], workflow_id: str) -> subprocess.Popen:
    """``ffl run --address`` of the demo in the background (its own queues); it ends with the run."""
    return subprocess.Popen([sys.executable, "-m", "interpreter", "run", str(DEMO / "shop.ffl"), "--handlers",
                             str(DEMO / "handlers.py"), "--type", workflow, "--input", json.dumps({"items": items}),
                             "--workflow-id", workflow_id, "--address", address],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def cli_start(address: str, workflow: str, items: list[str], workflow_id: str) -> None:
    """``temporal workflow start`` on the interpreter queue, as the README's worker recipe does."""
    done = temporal("workflow", "start", "--type", workflow, "--task-queue", "ffl", "--input",
                    json.dumps({"items": items}), "--workflow-id", workflow_id, "--address", address)
    if done.returncode != 0:
        raise RuntimeError(f"temporal workflow start {workflow_id}: {done.stderr.strip()}")


def start_workers(address: str, registry: str) -> list[subprocess.Popen]:
    """An interpreter worker and the shop queue's handler worker, as separate processes."""
    published = ffl("publish", str(DEMO / "shop.ffl"), "--registry", registry)
    if published.returncode != 0:
        raise RuntimeError(published.stderr)
    env = {**os.environ, "TEMPORAL_ADDRESS": address, "FFL_LOG_LEVEL": "INFO"}
    return [subprocess.Popen([sys.executable, "worker.py", *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
            for args in (["--task-queue", "ffl", "--registry", registry],
                         ["--task-queue", "shop", "--handlers", str(DEMO / "handlers.py")])]


async def run_ids(address: str, workflow_ids: list[str]) -> dict[str, str]:
    from temporalio.client import Client

    client = await Client.connect(address)
    return {wid: (await client.get_workflow_handle(wid).describe()).run_id for wid in workflow_ids}


async def wait_closed(address: str, workflow_ids: list[str]) -> None:
    from temporalio.client import Client

    client = await Client.connect(address)
    for wid in workflow_ids:
        try:
            await asyncio.wait_for(client.get_workflow_handle(wid).result(), 120)
        except Exception as exc:  # noqa: BLE001 - a failed run is one of the cases
            print(f"  {wid}: {type(exc).__name__}")


async def summaries(address: str, workflow_id: str) -> list[str]:
    """Every activity's and timer's summary in the run's history, in order."""
    from temporalio.client import Client

    client = await Client.connect(address)
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    converter = client.data_converter.payload_converter
    return [converter.from_payload(event.user_metadata.summary, None) for event in history.events
            if (event.HasField("activity_task_scheduled_event_attributes")
                or event.HasField("timer_started_event_attributes"))
            and event.HasField("user_metadata") and event.user_metadata.HasField("summary")]


def wait_until_waiting(address: str, workflow_id: str) -> str:
    """``ffl status`` of the run once a step waits for a signal (the line that says so is in it)."""
    for _ in range(120):
        status = ffl("status", workflow_id, "--address", address, "--brief")
        if "waiting for signal" in status.stdout:
            return status.stdout.strip()
        time.sleep(1)
    raise RuntimeError(f"{workflow_id} never waited for its signal")


async def photograph(ui: str, shots: list[tuple[str, str, list[str]]], out: Path) -> None:
    """Each shot: open ``path``, click the named tabs or buttons in order, screenshot the page.

    The page's load event, then a fixed pause: a running run's page polls its API for ever, so
    "networkidle" never comes.
    """
    from playwright.async_api import async_playwright

    profile = tempfile.mkdtemp(prefix="ffl-chromium-")
    async with async_playwright() as p:
        browser = await p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport={"width": 1600, "height": 1800})
        page = await browser.new_page()
        for name, path, clicks in shots:
            await page.goto(ui + path, wait_until="load")
            await page.wait_for_timeout(3000)  # the UI renders after its API calls settle
            for label in clicks:
                await page.get_by_text(label, exact=True).first.click()
                await page.wait_for_timeout(1500)
            await page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(f"  {out / (name + '.png')}  ({path} {' > '.join(clicks)})")
        await browser.close()
    shutil.rmtree(profile, ignore_errors=True)


CASES = {"completed": ("shop.Checkout", ["pen", "flaky-lamp", "notebook"]),
         "failed": ("shop.Checkout", ["pen", "broken-vase"]),
         "waiting": ("shop.Approved", ["cup", "notebook"])}
"""Each case's workflow and items; each runs once under ffl run and once started with the Temporal CLI."""


def history(workflow_id: str, run_id: str) -> str:
    return f"/namespaces/default/workflows/{workflow_id}/{run_id}/history"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server = start_temporal(ui=True)
    processes: list[subprocess.Popen] = []
    try:
        address, ui = server.address, server.extra["ui_url"]
        print(f"dev server {address}, Web UI {ui}")
        ids = {f"{how}-{case}": f"ui-{how}-{case}" for how in ("ffl-run", "cli") for case in CASES}
        runs = {name: ffl_run(address, *CASES[name.removeprefix("ffl-run-")], wid)
                for name, wid in ids.items() if name.startswith("ffl-run-")}
        processes += runs.values()
        processes += start_workers(address, tempfile.mkdtemp(prefix="ffl-ui-registry-"))
        for case, (workflow, items) in CASES.items():
            cli_start(address, workflow, items, ids[f"cli-{case}"])
        closing = [wid for name, wid in ids.items() if not name.endswith("waiting")]
        asyncio.run(wait_closed(address, closing))
        for name in ("ffl-run-waiting", "cli-waiting"):
            print(f"ffl status {ids[name]} while it waits:\n  " + wait_until_waiting(address, ids[name])
                  .replace("\n", "\n  "))
        bad = runs["ffl-run-failed"].communicate(timeout=60)[1].strip()
        print("failure as ffl run reports it:\n  " + bad.replace("\n", "\n  "))
        graph = ffl("status", ids["cli-failed"], "--address", address, "--graph", "dot", "-o",
                    str(out / "run-graph.dot"))
        if graph.returncode in (0, 1) and shutil.which("dot"):
            subprocess.run(["dot", "-Tpng", str(out / "run-graph.dot"), "-o", str(out / "run-graph.png")], check=True)
            print(f"  {out / 'run-graph.png'}")
        program_hash = json.loads(ffl("status", ids["cli-failed"], "--address", address, "--json").stdout)[
            "program_hash"]
        run_of = asyncio.run(run_ids(address, list(ids.values())))
        shots = [("01-runs", "/namespaces/default/workflows", []),
                 ("02-runs-of-program",
                  f"/namespaces/default/workflows?query={quote(f'FflProgramHash={chr(34)}{program_hash}{chr(34)}')}",
                  [])]
        for name, wid in ids.items():
            page = history(wid, run_of[wid])
            shots += [(f"{name}-compact", page, ["Compact"]), (f"{name}-timeline", page, ["Timeline"])]
            if name.endswith("waiting"):
                shots.append((f"{name}-details", page, ["User Metadata"]))
        asyncio.run(photograph(ui, shots, out))
        for name in ("ffl-run-waiting", "cli-waiting"):
            sent = ffl("signal", "--workflow-id", ids[name], "--name", "approve", "--input", '{"by": "ada"}',
                       "--address", address)
            print(sent.stdout.strip() or sent.stderr.strip())
        asyncio.run(wait_closed(address, [ids["ffl-run-waiting"], ids["cli-waiting"]]))
        run_of = asyncio.run(run_ids(address, [ids["ffl-run-waiting"], ids["cli-waiting"]]))
        asyncio.run(photograph(ui, [(f"{name}-approved-timeline", history(ids[name], run_of[ids[name]]),
                                     ["Timeline"]) for name in ("ffl-run-waiting", "cli-waiting")], out))
        for wid in ids.values():
            print(f"summaries of {wid}:")
            for text in asyncio.run(summaries(address, wid)):
                print(f"  {text}")
        if os.environ.get("FFL_KEEP_UI"):
            input(f"Web UI stays at {ui}; press Enter to stop ")
    finally:
        for proc in processes:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in processes:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
