"""docker-compose.temporal.yml and docker/ are consistent with the code (no docker engine here)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from interpreter.activities.handlers import load_handlers
from interpreter.compiler import compile_sources
from interpreter.program.config import RuntimeConfig

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.temporal.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"

_LOAD = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"


def load_compose() -> dict:
    """Parse with PyYAML, here or (if this venv lacks it) in any python3 on PATH that has it."""
    try:
        import yaml
    except ImportError:
        for python in ("python3", "/usr/bin/python3"):
            exe = shutil.which(python)
            if exe:
                done = subprocess.run([exe, "-c", _LOAD, str(COMPOSE)], capture_output=True, text=True)
                if done.returncode == 0:
                    return json.loads(done.stdout)
        pytest.skip("PyYAML not available")
    return yaml.safe_load(COMPOSE.read_text())


def in_image(path: str) -> Path:
    """Map a path inside the worker image (/app/...) back to the repository, following the Dockerfile's COPYs."""
    copies = re.findall(r"^COPY (\S+) (\S+)$", DOCKERFILE.read_text(), flags=re.M)
    for src, dest in copies:
        dest = "/app/" + dest.removeprefix("./").rstrip("/")
        if path == dest or path.startswith(dest + "/"):
            return ROOT / (src + path[len(dest) :])
    raise AssertionError(f"{path} is not copied into the image")


def test_dockerfile_copies_existing_files() -> None:
    copies = re.findall(r"^COPY (.+) \S+$", DOCKERFILE.read_text(), flags=re.M)
    assert copies
    for sources in copies:
        for source in sources.split():
            assert (ROOT / source).exists(), source
    assert 'ENTRYPOINT ["python", "worker.py"]' in DOCKERFILE.read_text()


def test_compose_has_the_production_services() -> None:
    services = load_compose()["services"]
    assert services["temporal"]["image"].startswith("temporalio/auto-setup:")
    assert services["temporal"]["environment"]["DB"] == "postgres12"
    assert services["temporal"]["environment"]["POSTGRES_SEEDS"] in services
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")
    assert services["mongo"]["image"].startswith("mongo:")
    for name in ("ffl-interpreter", "ffl-handlers-hello"):
        worker = services[name]
        assert worker["build"]["dockerfile"] == "docker/Dockerfile"
        assert (ROOT / worker["build"]["context"] / worker["build"]["dockerfile"]).is_file()
        assert worker["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
        assert set(worker["depends_on"]) == {"temporal", "mongo"}


def test_interpreter_worker_mirrors_with_a_valid_config() -> None:
    command = load_compose()["services"]["ffl-interpreter"]["command"]
    assert command[command.index("--task-queue") + 1] == "ffl"
    assert command[command.index("--mongo") + 1].startswith("mongodb://mongo:27017/")
    config = RuntimeConfig.model_validate_json(in_image(command[command.index("--config") + 1]).read_text())
    assert config.mirror is True


def test_example_handler_worker_serves_the_example_program() -> None:
    command = load_compose()["services"]["ffl-handlers-hello"]["command"]
    queue = command[command.index("--task-queue") + 1]
    handlers = in_image(command[command.index("--handlers") + 1])
    registry = load_handlers([str(handlers)])
    source = handlers.parent / "hello.ffl"
    program = compile_sources([(str(source), source.read_text())])
    events = [name for name, facet in program.facets.items() if facet.kind == "event"]
    assert events and all(program.facets[name].queue == queue for name in events)
    assert registry.names(queue=queue) == sorted(events)
