"""Run the original FFL dashboard against this project's MongoDB mirror and fetch every page.

A development check, not part of the test suite: the original dashboard is
a client to test the mirror against, run from a checkout of its project in
a virtual environment of its own (nothing of it is imported here).

    python -m venv /tmp/dash/venv
    /tmp/dash/venv/bin/pip install -e '/tmp/dash/facetwork[dashboard,mongodb]' python-multipart
    .venv/bin/python scripts/check_dashboard.py /tmp/dash/facetwork --python /tmp/dash/venv/bin/python

It starts a secantusdb and a Temporal dev server, fills the mirror's
default database with ``ffl run --mongo`` runs of every conformance case
(tests/conformance/valid, expected failures included), adds a run that is
still running (its handler blocks) and a cancelled one, starts the
dashboard on that database with no database setting, and fetches the
workflow list, each run's page (steps, tree, graph, timeline, tasks), each
step's page and expansion, the flows pages, tasks, servers, handlers and
logs. It prints one line per route with the pages fetched and their HTTP
statuses, then every problem found: an HTTP error, or a view that leaves
out what the mirror holds (a step missing from its run's tree, a step log
line or a parameter missing from its step's page, a busy worker without
its active task, ...). Exit status 1 if there is any.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from interpreter.activities.mirror import schema  # noqa: E402
from interpreter.local import free_port, start_mongo, start_temporal  # noqa: E402

CASES = REPO / "tests" / "conformance" / "valid"
FFL = [sys.executable, "-c", "import sys; from interpreter.cli import main; sys.exit(main())"]

HOLD = """
namespace hold {
    event facet Wait(n: Long) => (n: Long)
    /** A run whose only step waits on a handler that does not answer while the pages are fetched. */
    workflow Hold(n: Long) => (n: Long) andThen {
        w = Wait(n = $.n)
        yield Hold(n = w.n)
    }
}
"""


# --------------------------------------------------------------------------- filling the mirror


def event_facets(folder: Path) -> list[str]:
    from interpreter.compiler import compile_files

    program = compile_files([str(p) for p in sorted(folder.glob("*.ffl"))])
    return sorted(name for name, decl in program.facets.items() if decl.kind == "event" or decl.prompt is not None)


def conformance_runs(address: str, uri: str, parallel: int, only: set[str]) -> list[dict[str, Any]]:
    """``ffl run --mongo`` of every case of every conformance folder (or those in ``only``); what each run gave."""
    jobs = []
    for folder in sorted(p for p in CASES.iterdir() if p.is_dir() and (not only or p.name in only)):
        for index, case in enumerate(json.loads((folder / "cases.json").read_text())):
            jobs.append((folder, index, case))

    def run(job) -> dict[str, Any]:
        folder, index, case = job
        # Runs share one server: each gets queues of its own, so no run's worker takes another's tasks.
        tag = uuid.uuid4().hex[:8]
        config = Path(tempfile.mkdtemp(prefix="ffl-check-")) / "config.json"
        config.write_text(json.dumps({"queues": {name: f"{name.split('.')[0]}-{tag}" for name in event_facets(folder)}}))
        args = [*FFL, "run", str(folder), "--workflow", case["workflow"], "--input", json.dumps(case.get("inputs") or {}),
                "--address", address, "--mongo", uri, "--task-queue", f"ffl-{tag}", "--config", str(config),
                "--allow-scripts"]  # a shared server: scripts are opt-in there  # fmt: skip
        if (folder / "handlers.py").is_file():
            args += ["--handlers", str(folder / "handlers.py")]
        proc = subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=300)
        expect_ok = "outputs" in case["expect"]
        return {"case": f"{folder.name}[{index}]", "workflow": case["workflow"], "code": proc.returncode,
                "as_expected": (proc.returncode == 0) == expect_ok, "stderr": proc.stderr[-400:]}  # fmt: skip

    with ThreadPoolExecutor(parallel) as pool:
        return list(pool.map(run, jobs))


class LiveRuns:
    """A run still running (its handler blocks until ``release``) and a cancelled one, with their workers."""

    def __init__(self, address: str, uri: str) -> None:
        self.address, self.uri = address, uri
        self.ready, self.done = threading.Event(), threading.Event()
        self.ids: dict[str, str] = {}
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, daemon=True)

    def start(self, timeout: float = 120) -> LiveRuns:
        self.thread.start()
        if not self.ready.wait(timeout) or self.error:
            raise RuntimeError(f"live runs did not start: {self.error!r}")
        return self

    def stop(self) -> None:
        self.done.set()
        self.thread.join(60)

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as exc:  # noqa: BLE001 - reported by start()
            self.error = exc
            self.ready.set()

    async def _run(self) -> None:
        from temporalio.client import Client

        from interpreter.activities.handlers import HandlerRegistry
        from interpreter.activities.mirror import MirrorSession, MongoProgramStore
        from interpreter.cli.worker_main import build_worker
        from interpreter.compiler import compile_sources
        from interpreter.program.config import RuntimeConfig

        client = await Client.connect(self.address)
        store = MongoProgramStore(self.uri)
        store.publish(compile_sources([("hold.ffl", HOLD)]))
        queue = "ffl-live-" + uuid.uuid4().hex[:6]
        entered, release = threading.Semaphore(0), threading.Event()

        def wait(payload: dict) -> dict:
            payload["_step_log"](f"waiting with n={payload['n']}")
            entered.release()
            release.wait(600)
            return {"n": payload["n"]}

        registry = HandlerRegistry()
        registry.register("hold.Wait", wait)
        config = RuntimeConfig(mirror=True, queues={"hold": queue + "-h"})
        interpreter = MirrorSession(self.uri, program_store=store, queues=[queue], service="interpreter").start()
        handlers = MirrorSession(self.uri, queues=[queue + "-h"], handlers=registry.names(), service="hold-handlers")
        handlers.start()
        workers = [build_worker(client, queue, HandlerRegistry(), store=store, config=config, interpreter=True,
                                mirror=interpreter.writer),
                   build_worker(client, queue + "-h", registry, config=config, listeners=[handlers.listener])]  # fmt: skip
        try:
            async with workers[0], workers[1]:
                running = await client.start_workflow("hold.Hold", {"n": 1}, id="hold-running-" + uuid.uuid4().hex[:6],
                                                      task_queue=queue)  # fmt: skip
                cancelled = await client.start_workflow("hold.Hold", {"n": 2}, id="hold-cancel-" + uuid.uuid4().hex[:6],
                                                        task_queue=queue)  # fmt: skip
                for _ in range(2):
                    assert await asyncio.to_thread(entered.acquire, True, 60), "handler never started"
                await cancelled.cancel()
                try:
                    await asyncio.wait_for(cancelled.result(), 30)
                except Exception:  # noqa: BLE001 - the cancellation itself
                    pass
                await asyncio.sleep(1)
                assert await asyncio.to_thread(interpreter.writer.flush, 30)
                assert await asyncio.to_thread(handlers.writer.flush, 30)
                self.ids = {"running": running.id, "cancelled": cancelled.id}
                self.ready.set()
                await asyncio.to_thread(self.done.wait)
                release.set()
                await running.terminate("dashboard check finished")
        finally:
            release.set()
            interpreter.close()
            handlers.close()
            store.close()


# --------------------------------------------------------------------------- the dashboard


def start_dashboard(python: str, checkout: Path, uri: str, log: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "AFL_MONGODB_URL": uri, "PYTHONPATH": str(checkout)}
    env.pop("AFL_MONGODB_DATABASE", None)  # the dashboard's own default database, as a user would have it
    proc = subprocess.Popen([python, "-m", "uvicorn", "facetwork.dashboard.app:create_app", "--factory",
                             "--host", "127.0.0.1", "--port", str(port)], cwd=checkout, env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(base + "/health", timeout=2)
            return proc, base
        except (urllib.error.URLError, ConnectionError, OSError):
            if proc.poll() is not None:
                raise RuntimeError(f"dashboard exited: {log.read_text()[-2000:]}") from None
            time.sleep(0.5)
    raise RuntimeError("dashboard did not answer on /health")


class Crawler:
    """Fetches pages, counts them per route, records every problem."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.routes: dict[str, Counter] = defaultdict(Counter)
        self.problems: list[str] = []

    def get(self, route: str, url: str, headers: dict[str, str] | None = None) -> str:
        request = urllib.request.Request(self.base + url, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                body = response.read().decode("utf-8", "replace")
                status = response.status
        except urllib.error.HTTPError as err:
            body, status = err.read().decode("utf-8", "replace"), err.code
        self.routes[route][status] += 1
        if status >= 400:
            self.problems.append(f"HTTP {status} {url}")
        return body

    def expect(self, page: str, url: str, texts: list[str], what: str) -> None:
        shown = html.unescape(page)
        missing = [t for t in texts if t and str(t) not in shown]
        if missing:
            self.problems.append(f"{url}: {what} missing: {missing[:5]}")


def _text(value: Any) -> str:
    return str(value)


def crawl(base: str, db: Any, live: dict[str, str], steps_per_run: int) -> Crawler:
    c = Crawler(base)
    runners = list(db.runners.find({}))
    by_tab = {"running": {"created", "running", "paused"}, "completed": {"completed"}, "failed": {"failed", "cancelled"}}
    for tab, states in by_tab.items():
        page = c.get("/v2/workflows?tab=…", f"/v2/workflows?tab={tab}")
        for runner in (r for r in runners if r["state"] in states):
            steps = list(db.steps.find({"workflow_id": runner["workflow_id"]}, {"state": 1}))
            done = sum(1 for s in steps if s["state"] == schema.StepState.COMPLETE)
            c.expect(page, f"/v2/workflows?tab={tab}", [runner["uuid"], f"{done}/{len(steps)}"],
                     f"runner {runner['workflow_name']} or its progress")  # fmt: skip
    for runner in runners:
        rid = runner["uuid"]
        steps = list(db.steps.find({"workflow_id": runner["workflow_id"]}))
        page = c.get("/v2/workflows/{runner}", f"/v2/workflows/{rid}")
        timed = [s for s in steps if s.get("start_time")]
        if page.count("{label:") < len(timed):
            c.problems.append(f"/v2/workflows/{rid}: timeline shows {page.count('{label:')} of {len(timed)} steps")
        if page.count("<rect") < len(steps):
            c.problems.append(f"/v2/workflows/{rid}: graph shows {page.count('<rect')} of {len(steps)} steps")
        for tab in ("running", "complete", "error", "other"):
            c.get("/v2/workflows/{runner}?step_tab=…", f"/v2/workflows/{rid}?step_tab={tab}")
        tree = c.get("/v2/workflows/{runner}/steps/partial?view=tree", f"/v2/workflows/{rid}/steps/partial?view=tree")
        c.expect(tree, f"/v2/workflows/{rid} tree", [s["uuid"] for s in steps], "steps in the tree")
        c.get("/v2/workflows/{runner}/steps/partial", f"/v2/workflows/{rid}/steps/partial?step_tab=complete")
        c.get("/v2/workflows/{runner}/summary/partial", f"/v2/workflows/{rid}/summary/partial")
        tasks_page = c.get("/v2/workflows/{runner}/tasks/partial", f"/v2/workflows/{rid}/tasks/partial")
        tasks = list(db.tasks.find({"workflow_id": runner["workflow_id"]}))
        c.expect(tasks_page, f"/v2/workflows/{rid}/tasks/partial", [f"{len(tasks)} total" if tasks else ""], "tasks")
        c.get("/runners/{runner}/steps", f"/runners/{rid}/steps")
        logs_page = c.get("/runners/{runner}/logs", f"/runners/{rid}/logs")
        c.expect(logs_page, f"/runners/{rid}/logs", [log["message"][:60] for log in db.logs.find({"runner_id": rid})],
                 "log lines")  # fmt: skip
        c.get("/api/runners/{runner}", f"/api/runners/{rid}")
        c.get("/api/runners/{runner}/steps", f"/api/runners/{rid}/steps")
        for step in sorted(steps, key=lambda s: s.get("path", ""))[:steps_per_run]:
            check_step(c, db, rid, step)
    for flow in db.flows.find({}):
        check_flow(c, db, flow)
    check_operations(c, db, live)
    return c


def check_step(c: Crawler, db: Any, rid: str, step: dict[str, Any]) -> None:
    sid = step["uuid"]
    logs = [e["message"] for e in db.step_logs.find({"step_id": sid})]
    params = list((step.get("attributes") or {}).get("params") or {})
    returns = list((step.get("attributes") or {}).get("returns") or {})
    for route, url, headers in (("/steps/{step}", f"/steps/{sid}", None),
                                ("/v2/workflows/{runner}/steps/{step}/expand",
                                 f"/v2/workflows/{rid}/steps/{sid}/expand", {"HX-Request": "true"})):  # fmt: skip
        page = c.get(route, url, headers)
        c.expect(page, url, [step.get("facet_name") or ""], "facet")
        c.expect(page, url, params + returns, "params/returns")
        c.expect(page, url, logs, "step log lines")
        if step.get("lifecycle") == "failed" and not any(e["level"] == "error" for e in db.step_logs.find(
                {"step_id": sid})):  # fmt: skip
            c.problems.append(f"{url}: failed step without an error line in its logs")
    c.get("/api/steps/{step}/logs", f"/api/steps/{sid}/logs")


def check_flow(c: Crawler, db: Any, flow: dict[str, Any]) -> None:
    fid = flow["uuid"]
    names = [w["name"].rsplit(".", 1)[-1] for w in flow["workflows"]]
    c.expect(c.get("/flows", "/flows"), "/flows", [fid], "flow")
    c.expect(c.get("/flows/{flow}", f"/flows/{fid}"), f"/flows/{fid}", [f["name"] for f in flow["facets"]], "facets")
    c.get("/flows/{flow}/source", f"/flows/{fid}/source")
    c.get("/flows/{flow}/json", f"/flows/{fid}/json")
    c.expect(c.get("/flows/{flow}/browse", f"/flows/{fid}/browse"), f"/flows/{fid}/browse", names, "workflows")
    for ns in sorted({w["name"].rsplit(".", 1)[0] if "." in w["name"] else "_top" for w in flow["workflows"]}):
        c.get("/flows/{flow}/ns/{namespace}", f"/flows/{fid}/ns/{ns}")
    for definition in flow["workflows"]:
        c.get("/flows/{flow}/run/{workflow}", f"/flows/{fid}/run/{definition['uuid']}")
    c.get("/api/flows/{flow}", f"/api/flows/{fid}")


def check_operations(c: Crawler, db: Any, live: dict[str, str]) -> None:
    for route in ("/tasks", "/events", "/servers", "/namespaces", "/sources", "/handlers", "/v2/handlers", "/v2/fleet",
                  "/workflows/new", "/api/runners", "/api/tasks", "/api/flows", "/api/servers", "/api/fleet",
                  "/api/namespaces", "/api/handlers", "/api/sources", "/api/events", "/health"):  # fmt: skip
        c.get(route, route)
    for tab in ("running", "startup", "error", "shutdown", "down"):
        c.get("/v2/servers?tab=…", f"/v2/servers?tab={tab}")
    for task in db.tasks.find({}).limit(60):
        page = c.get("/tasks/{task}", f"/tasks/{task['uuid']}")
        c.expect(page, f"/tasks/{task['uuid']}", [task["name"]], "task name")
        c.get("/events/{task}", f"/events/{task['uuid']}")
    for server in db.servers.find({}):
        c.get("/v2/servers/{server}", f"/v2/servers/{server['uuid']}")
        c.get("/servers/{server}", f"/servers/{server['uuid']}")
    for ns in sorted({n["name"] for f in db.flows.find({}) for n in f["namespaces"]}):
        c.get("/namespaces/{namespace}", f"/namespaces/{ns}")
    busy = db.tasks.find_one({"temporal_workflow_id": live.get("running"), "state": "running"})
    if busy is None:
        c.problems.append("the still-running run has no running task in the mirror")
        return
    page = c.get("/v2/servers?tab=…", "/v2/servers?tab=running")
    c.expect(page, "/v2/servers?tab=running", [busy["server_id"][:8], "1 active", busy["name"]], "busy worker's task")
    page = c.get("/v2/servers/{server}", f"/v2/servers/{busy['server_id']}")
    c.expect(page, f"/v2/servers/{busy['server_id']}", [busy["name"]], "busy worker's task")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="a checkout of the original FFL project")
    parser.add_argument("--python", default=sys.executable, help="python of a venv with the original dashboard")
    parser.add_argument("--parallel", type=int, default=3, help="ffl run processes at a time (default 3)")
    parser.add_argument("--steps-per-run", type=int, default=40, help="step pages fetched per run (default 40)")
    parser.add_argument("--only", default="", help="comma-separated conformance folders (default: all)")
    parser.add_argument("--hold", action="store_true", help="keep everything up for browsing until interrupted")
    args = parser.parse_args(argv)
    import pymongo

    work = Path(tempfile.mkdtemp(prefix="ffl-dashboard-check-"))
    mongo = start_mongo(log_dir=str(work))
    temporal = start_temporal(ui=False, log_dir=str(work))
    live: LiveRuns | None = None
    dashboard: subprocess.Popen | None = None
    try:
        uri = mongo.extra["uri"]
        started = time.monotonic()
        runs = conformance_runs(temporal.address, uri, args.parallel, {n for n in args.only.split(",") if n})
        unexpected = [r for r in runs if not r["as_expected"]]
        print(f"{len(runs)} conformance runs mirrored in {time.monotonic() - started:.0f}s "
              f"({sum(r['code'] != 0 for r in runs)} failed as expected, {len(unexpected)} unexpected)")  # fmt: skip
        for run in unexpected:
            print(f"  unexpected: {run['case']} exit {run['code']}: {run['stderr']}")
        live = LiveRuns(temporal.address, uri).start()
        dashboard, base = start_dashboard(args.python, args.checkout, uri, work / "dashboard.log")
        db = pymongo.MongoClient(uri)[schema.DEFAULT_DATABASE]
        print("mirror: " + ", ".join(f"{name} {db[name].count_documents({})}" for name in schema.COLLECTIONS))
        started = time.monotonic()
        crawler = crawl(base, db, live.ids, args.steps_per_run)
        total = sum(sum(c.values()) for c in crawler.routes.values())
        print(f"{total} pages in {time.monotonic() - started:.0f}s")
        for route, statuses in sorted(crawler.routes.items()):
            print(f"  {sum(statuses.values()):5d}  {route}  " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
        errors = re.findall(r"Traceback|Error:.*", (work / "dashboard.log").read_text())
        print(f"dashboard log: {len(errors)} error lines ({work / 'dashboard.log'})")
        print(f"{len(crawler.problems)} problems" + (":" if crawler.problems else ""))
        for problem in crawler.problems[:200]:
            print("  " + problem)
        if args.hold:
            print(f"dashboard at {base}, mirror at {uri}, Temporal at {temporal.address}; interrupt to stop")
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                pass
        return 1 if crawler.problems or unexpected else 0
    finally:
        if dashboard is not None:
            dashboard.terminate()
            dashboard.wait(10)
        if live is not None:
            live.stop()
        temporal.stop()
        mongo.stop()


if __name__ == "__main__":
    sys.stdout.reconfigure(line_buffering=True)
    import logging
    import signal

    logging.getLogger("temporalio").setLevel(logging.CRITICAL)  # the live runs' activities cancelled at the end
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # stop the services on kill too
    status = main()
    sys.stdout.flush()
    os._exit(status)
