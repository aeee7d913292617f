"""Screenshots of the Temporal Web UI showing FFL runs, to check that the UI reads like the program.

Runs scripts/ui_demo/shop.ffl twice on a fresh dev server with its Web UI
(one run completes, one fails: foreach, when, a composed facet and a failing
step), then photographs the run list, the list filtered by the program's
search attribute, each run's page and its event history, and the run graph
(``ffl status --graph``, rendered by Graphviz when installed). Also prints
each activity's summary from the history, so the check does not depend on
reading pixels alone.

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


def ffl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=180)


def start_live_run(address: str) -> tuple[subprocess.Popen, str, str]:
    """A run that stays live for a while (one slow price), served by its ``ffl run`` process."""
    proc = subprocess.Popen([sys.executable, "-m", "interpreter", "run", str(DEMO / "shop.ffl"), "--handlers",
                             str(DEMO / "handlers.py"), "--workflow", "shop.Checkout", "--input",
                             json.dumps({"items": ["pen", "slow-clock", "cup"]}), "--address", address],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(6)
    listed = subprocess.run([str(Path(sys.executable).parent / "temporal"), "workflow", "list", "--address",
                             address, "-o", "json", "--query", "ExecutionStatus='Running'"],
                            capture_output=True, text=True, timeout=30)
    latest = json.loads(listed.stdout)[0]["execution"]
    return proc, latest["workflowId"], latest["runId"]


def run_demo(address: str, items: list[str]) -> dict:
    done = ffl("run", str(DEMO / "shop.ffl"), "--handlers", str(DEMO / "handlers.py"), "--workflow",
               "shop.Checkout", "--input", json.dumps({"items": items}), "--address", address)
    listed = subprocess.run([str(Path(sys.executable).parent / "temporal"), "workflow", "list", "--address",
                             address, "-o", "json", "--limit", "1"], capture_output=True, text=True, timeout=30)
    latest = json.loads(listed.stdout)[0]
    return {"code": done.returncode, "stderr": done.stderr.strip(), "id": latest["execution"]["workflowId"],
            "run_id": latest["execution"]["runId"]}


async def summaries(address: str, workflow_id: str) -> list[str]:
    from temporalio.client import Client

    client = await Client.connect(address)
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    converter = client.data_converter.payload_converter
    return [converter.from_payload(event.user_metadata.summary, None) for event in history.events
            if event.HasField("activity_task_scheduled_event_attributes") and event.HasField("user_metadata")]


async def photograph(ui: str, shots: list[tuple[str, str, list[str]]], out: Path) -> None:
    """Each shot: open ``path``, click the named tabs or buttons in order, screenshot the page."""
    from playwright.async_api import async_playwright

    profile = tempfile.mkdtemp(prefix="ffl-chromium-")
    async with async_playwright() as p:
        browser = await p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS, viewport={"width": 1600, "height": 1800})
        page = await browser.new_page()
        for name, path, clicks in shots:
            await page.goto(ui + path, wait_until="networkidle")
            await page.wait_for_timeout(2000)  # the UI renders after its API calls settle
            for label in clicks:
                await page.get_by_text(label, exact=True).first.click()
                await page.wait_for_timeout(1500)
            await page.screenshot(path=str(out / f"{name}.png"), full_page=True)
            print(f"  {out / (name + '.png')}  ({path} {' > '.join(clicks)})")
        await browser.close()
    shutil.rmtree(profile, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "screenshots"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server = start_temporal(ui=True)
    try:
        address, ui = server.address, server.extra["ui_url"]
        print(f"dev server {address}, Web UI {ui}")
        good = run_demo(address, ["pen", "notebook", "lamp"])
        bad = run_demo(address, ["pen", "broken-vase"])
        print(f"completed run {good['id']} (exit {good['code']}); failed run {bad['id']} (exit {bad['code']})")
        print("failure as ffl run reports it:\n  " + bad["stderr"].replace("\n", "\n  "))
        for run in (good, bad):
            print(f"activity summaries of {run['id']}:")
            for text in asyncio.run(summaries(address, run["id"])):
                print(f"  {text}")
        status = ffl("status", bad["id"], "--address", address, "--brief")
        print(f"ffl status {bad['id']} (exit {status.returncode}):\n  " + status.stdout.strip().replace("\n", "\n  "))
        graph = ffl("status", bad["id"], "--address", address, "--graph", "dot", "-o", str(out / "run-graph.dot"))
        if graph.returncode in (0, 1) and shutil.which("dot"):
            subprocess.run(["dot", "-Tpng", str(out / "run-graph.dot"), "-o", str(out / "run-graph.png")], check=True)
            print(f"  {out / 'run-graph.png'}")
        program_hash = json.loads(ffl("status", bad["id"], "--address", address, "--json").stdout)["program_hash"]
        query = quote(f'FflProgramHash="{program_hash}"')
        failed = f"/namespaces/default/workflows/{bad['id']}/{bad['run_id']}/history"
        completed = f"/namespaces/default/workflows/{good['id']}/{good['run_id']}/history"
        shots = [
            ("01-runs", "/namespaces/default/workflows", []),
            ("02-runs-of-program", f"/namespaces/default/workflows?query={query}", []),
            ("03-failed-run-compact", failed, ["Compact"]),
            ("04-failed-run-timeline", failed, ["Timeline"]),
            ("05-failed-run-user-metadata", failed, ["User Metadata"]),
            ("06-failed-run-memo", failed, ["Memo"]),
            ("07-failed-run-search-attributes", failed, ["Search Attributes"]),
            ("08-completed-run-timeline", completed, ["Timeline"]),
        ]
        asyncio.run(photograph(ui, shots, out))
        proc, live_id, live_run = start_live_run(address)
        try:
            live = f"/namespaces/default/workflows/{live_id}/{live_run}/history"
            status = ffl("status", live_id, "--address", address, "--brief")
            print(f"ffl status {live_id} while it runs (exit {status.returncode}):\n  "
                  + status.stdout.strip().replace("\n", "\n  "))
            graph = ffl("status", live_id, "--address", address, "--graph", "dot", "-o", str(out / "live-graph.dot"))
            if graph.returncode == 3 and shutil.which("dot"):
                subprocess.run(["dot", "-Tpng", str(out / "live-graph.dot"), "-o", str(out / "live-graph.png")],
                               check=True)
                print(f"  {out / 'live-graph.png'}")
            asyncio.run(photograph(ui, [("09-live-run-user-metadata", live, ["User Metadata"]),
                                        ("10-live-run-timeline", live, ["Timeline"])], out))
        finally:
            proc.send_signal(signal.SIGINT)
            said = proc.communicate(timeout=30)[1].strip().splitlines()
            print("interrupted the live run's ffl run: " + (said[-1] if said else f"exit {proc.returncode}"))
            subprocess.run([str(Path(sys.executable).parent / "temporal"), "workflow", "terminate", "--workflow-id",
                            live_id, "--address", address, "--reason", "screenshots taken"], capture_output=True)
        if os.environ.get("FFL_KEEP_UI"):
            input(f"Web UI stays at {ui}; press Enter to stop ")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
