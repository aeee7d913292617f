"""Handler packages written for the original FFL runtime load and run unchanged.

The two packages in tests/original_packages (poller style and registry-runner
style, both named ``handlers``) are loaded in-process for the registration
details, and run as a user runs them: ``ffl run --handlers DIR`` and
``python worker.py --task-queue NS --handlers DIR`` beside an interpreter
worker process, all on the session's dev server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from interpreter.activities.handlers import HandlerLoadError, load_handlers
from interpreter.activities.program_store import LocalProgramStore
from interpreter.compiler import compile_files

from .test_worker import WorkerProcess

REPO = Path(__file__).resolve().parents[2]
PACKAGES = REPO / "tests" / "original_packages"
POLLER = PACKAGES / "poller_style"
REGISTRY = PACKAGES / "registry_style"


@pytest.fixture
def fresh_imports(monkeypatch):
    """Each test imports its own ``handlers`` package: forget the ones imported before and after it."""
    monkeypatch.setattr(sys, "path", list(sys.path))

    def forget() -> None:
        for name in [n for n in sys.modules if n == "handlers" or n.startswith("handlers.")]:
            del sys.modules[name]

    forget()
    yield
    forget()


def ffl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


# ----------------------------------------------------------------------------- loading

def test_poller_style_package_directory_registers_through_register_all_handlers(fresh_imports):
    registry = load_handlers(str(POLLER / "handlers"))
    assert registry.names() == ["inventory.Audit", "inventory.Count", "inventory.Restock",
                                "inventory.reports.Summarize"]
    assert sys.modules["handlers"].__file__ == str(POLLER / "handlers" / "__init__.py")
    count = registry.registration("inventory.Count")
    assert count.fn is sys.modules["handlers.inventory.stock_handlers"].handle_count and count.module_uri is None


def test_registry_style_package_imports_what_each_registration_names(fresh_imports):
    registry = load_handlers(str(REGISTRY / "handlers"))
    assert registry.names() == ["billing.Charge", "billing.Invoice", "billing.Refund"]
    invoice = registry.registration("billing.Invoice")
    module = sys.modules["handlers.invoices.invoice_handlers"]
    assert invoice.module_uri == f"file://{module.__file__}" and invoice.entrypoint == "handle"
    assert invoice.fn is module.handle  # the file:// path is the module already imported, not a second copy
    assert (invoice.version, invoice.checksum, invoice.metadata) == ("1.2.0", "sha256:invoices", {"tier": "gold"})
    charge = registry.registration("billing.Charge")
    assert charge.module_uri == "handlers.payments.payment_handlers" and charge.entrypoint == "charge"
    assert charge.fn is sys.modules["handlers.payments.payment_handlers"].charge
    assert (charge.timeout_ms, charge.requirements) == (1500, ("requests>=2.28",))
    assert registry.timeouts() == {"billing.Charge": 1.5}


def test_a_file_inside_a_package_is_imported_with_its_package_context(fresh_imports):
    registry = load_handlers(str(POLLER / "handlers" / "inventory" / "stock_handlers.py"))
    assert registry.names() == ["inventory.Count", "inventory.Restock"]  # its register_stock_handlers
    assert "handlers.inventory.stock_handlers" in sys.modules and "handlers.shared.formatting" in sys.modules


def test_a_package_by_module_name_from_its_parent_directory(fresh_imports, monkeypatch):
    monkeypatch.chdir(REGISTRY)
    assert load_handlers("handlers").names() == ["billing.Charge", "billing.Invoice", "billing.Refund"]


def test_two_packages_of_one_name_in_one_process_are_refused_clearly(fresh_imports):
    load_handlers(str(POLLER / "handlers"))
    with pytest.raises(HandlerLoadError, match="another module named 'handlers' is already imported"):
        load_handlers(str(REGISTRY / "handlers"))


def test_a_registration_naming_a_missing_function_or_module_fails_at_load(tmp_path, fresh_imports):
    package = tmp_path / "handlers"
    package.mkdir()
    (package / "__init__.py").write_text(
        "def register_handlers(runner):\n"
        "    runner.register_handler(facet_name='x.F', module_uri='handlers.impl', entrypoint='nope')\n")  # fmt: skip
    (package / "impl.py").write_text("def handle(payload):\n    return {}\n")
    with pytest.raises(HandlerLoadError) as err:
        load_handlers(str(package))
    assert "handler of x.F: module_uri 'handlers.impl', entrypoint 'nope'" in str(err.value)
    assert "has no attribute 'nope'" in str(err.value)
    for name in ("handlers", "handlers.impl"):
        sys.modules.pop(name, None)
    (package / "__init__.py").write_text(
        "def register_handlers(runner):\n"
        f"    runner.register_handler(facet_name='x.F', module_uri='file://{tmp_path}/gone.py')\n")  # fmt: skip
    with pytest.raises(HandlerLoadError, match="gone.py: no such file"):
        load_handlers(str(package))


def test_a_directory_holding_only_packages_names_them(tmp_path):
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    with pytest.raises(HandlerLoadError, match="holds the packages alpha, beta: pass one instead"):
        load_handlers(str(tmp_path))


def test_an_installed_library_the_package_imports_is_not_shadowed(tmp_path, fresh_imports):
    """Original packages import the original project's modules (``facetwork.config``): they come from where
    they are installed, never from this project or the package's folders."""
    site = tmp_path / "site"
    (site / "facetwork").mkdir(parents=True)
    (site / "facetwork" / "__init__.py").write_text("")
    (site / "facetwork" / "config.py").write_text("CACHE_DIR = '/installed'\n")
    package = tmp_path / "example" / "handlers"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from facetwork.config import CACHE_DIR\n"
        "def register_all_handlers(poller):\n"
        "    poller.register('x.Where', lambda payload: {'dir': CACHE_DIR})\n")  # fmt: skip
    sys.path.append(str(site))
    try:
        registry = load_handlers(str(package))
        assert registry.lookup("x.Where")({}) == {"dir": "/installed"}
        import interpreter
        assert not (Path(interpreter.__file__).parents[1] / "facetwork").exists()
    finally:
        for name in [n for n in sys.modules if n == "facetwork" or n.startswith("facetwork.")]:
            del sys.modules[name]


# ----------------------------------------------------------------------------- ffl run --handlers DIR

def test_poller_style_package_runs_unchanged_under_ffl_run(temporal_service):
    done = ffl("run", str(POLLER / "inventory.ffl"), "--workflow", "inventory.Refill",
               "--input", '{"skus": ["apple", "plum", "pear"]}', "--handlers", str(POLLER / "handlers"),
               "--address", temporal_service.address)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["labels"] == ["APPLEx10", "PLUMx10", "PEARx12"]
    assert result["report"] == "3 skus, 1 empty"
    assert result["served_by"] == ["inventory.Count"] * 3 + ["inventory.reports.Summarize"]
    assert len(set(result["tasks"])) == 3 and all(len(t) == 36 for t in result["tasks"])  # one task uuid a step


def test_registry_style_package_runs_unchanged_under_ffl_run_and_its_timeout_holds(temporal_service):
    done = ffl("run", str(REGISTRY / "billing.ffl"), "--workflow", "billing.Bill",
               "--input", '{"customer": "acme", "amount": 1250}', "--handlers", str(REGISTRY / "handlers"),
               "--address", temporal_service.address)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["tier"] == "gold" and result["served_by"] == ["billing.Invoice", "billing.Refund"]
    assert result["receipt"] == "INV-acme-1250/12.50"
    assert result["attempt"] == 1  # timeout_ms=1500 ended the hanging first attempt; the retry succeeded
    assert ": warning: mixin 'Timeout' names a facet declared nowhere" in done.stderr  # ffl run shows warnings


# ----------------------------------------------------------------------------- python worker.py --handlers DIR

class Deployment:
    """An interpreter worker process and a handler worker process, on queues of their own."""

    def __init__(self, address: str, folder: Path, tmp: Path, namespace: str) -> None:
        self.queue = "ffl-" + uuid.uuid4().hex[:8]
        self.handler_queue = f"{namespace}-{uuid.uuid4().hex[:8]}"
        config = tmp / "config.json"
        config.write_text(json.dumps({"queues": {namespace: self.handler_queue}}))
        registry = tmp / "registry"
        env = {"TEMPORAL_ADDRESS": address, "FFL_REGISTRY": str(registry)}
        self.store = LocalProgramStore(registry)
        self.store.publish(compile_files([str(folder)]))
        self.processes = [
            WorkerProcess("--task-queue", self.queue, "--interpreter", "--config", str(config), env=env),
            WorkerProcess("--task-queue", self.handler_queue, "--handlers", str(folder / "handlers"),
                          "--config", str(config), env=env),
        ]  # fmt: skip

    def __enter__(self) -> Deployment:
        for process in self.processes:
            process.wait_ready()
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.stop()

    def banner(self) -> str:
        return self.processes[1].wait_ready()


async def test_poller_style_package_under_worker_py_reports_progress_to_ffl_status(
    temporal_client, temporal_service, tmp_path
):
    with Deployment(temporal_service.address, POLLER, tmp_path, "inventory") as deployed:
        assert "inventory.Count" in deployed.banner() and "inventory.reports.Summarize" in deployed.banner()
        refill = await temporal_client.execute_workflow(
            "inventory.Refill", {"skus": ["apple", "pear"]}, id="refill-" + uuid.uuid4().hex[:8],
            task_queue=deployed.queue)  # fmt: skip
        assert refill["labels"] == ["APPLEx10", "PEARx12"] and refill["report"] == "2 skus, 0 empty"

        gate = tmp_path / "gate"
        workflow_id = "audit-" + uuid.uuid4().hex[:8]
        handle = await temporal_client.start_workflow("inventory.AuditShelf", {"gate": str(gate)}, id=workflow_id,
                                                      task_queue=deployed.queue)  # fmt: skip
        started = Path(str(gate) + ".started")
        for _ in range(300):
            if started.exists():
                break
            await asyncio.sleep(0.1)
        assert started.exists(), "".join(deployed.processes[1].lines)
        status = ""
        for _ in range(50):  # the heartbeat reaches the server shortly after the handler sent it
            done = await asyncio.to_thread(ffl, "status", workflow_id, "--address", temporal_service.address)
            status = done.stdout
            if "progress:" in status:
                break
            await asyncio.sleep(0.2)
        assert "progress: 40% waiting for the gate" in status, status + done.stderr
        description = await handle.describe()
        pending = description.raw_description.pending_activities
        details = await temporal_client.data_converter.decode(list(pending[0].heartbeat_details.payloads))
        assert details == [{"progress_pct": 40, "progress_message": "waiting for the gate"}]
        Path(str(gate) + ".go").touch()
        assert await handle.result() == {"audited": True}


async def test_registry_style_package_under_worker_py_keeps_its_timeout(temporal_client, temporal_service, tmp_path):
    """The interpreter worker never saw the registration: the handler worker enforces timeout_ms itself."""
    with Deployment(temporal_service.address, REGISTRY, tmp_path, "billing") as deployed:
        result = await temporal_client.execute_workflow(
            "billing.Bill", {"customer": "zed", "amount": 705}, id="bill-" + uuid.uuid4().hex[:8],
            task_queue=deployed.queue)  # fmt: skip
    assert result["receipt"] == "INV-zed-705/7.05" and result["tier"] == "gold"
    assert result["attempt"] == 1
    assert result["served_by"] == ["billing.Invoice", "billing.Refund"]
