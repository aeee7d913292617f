"""docker-compose.temporal.yml, docker/ and .dockerignore are consistent with the code (no docker engine here).

The compose file is parsed as YAML and checked against the repository: the
non-deprecated Temporal images with their one-shot schema and namespace
jobs, credentials only from the env file, health checks, workers whose spool
directory their user owns. Where a compose client exists (``docker compose``
or ``docker-compose``), it validates the file too, with .env.example's values.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import yaml

from interpreter.activities.handlers import load_handlers
from interpreter.compiler import compile_sources
from interpreter.program.config import RuntimeConfig

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.temporal.yml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
ENV_EXAMPLE = ROOT / ".env.example"
WORKERS = ("ffl-interpreter", "ffl-handlers-hello")


def load_compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def env_example() -> dict[str, str]:
    pairs = [line.split("=", 1) for line in ENV_EXAMPLE.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    return {key.strip(): value.strip() for key, value in pairs}


def in_image(path: str) -> Path:
    """Map a path inside the worker image (/app/...) back to the repository, following the Dockerfile's COPYs."""
    copies = re.findall(r"^COPY (\S+) (\S+)$", DOCKERFILE.read_text(), flags=re.M)
    for src, dest in copies:
        dest = "/app/" + dest.removeprefix("./").rstrip("/")
        if path == dest or path.startswith(dest + "/"):
            return ROOT / (src + path[len(dest) :])
    raise AssertionError(f"{path} is not copied into the image")


def test_dockerfile_copies_existing_files_and_installs_dependencies_before_the_code() -> None:
    text = DOCKERFILE.read_text()
    copies = re.findall(r"^COPY (.+) \S+$", text, flags=re.M)
    assert copies
    for sources in copies:
        for source in sources.split():
            assert (ROOT / source).exists(), source
    assert 'ENTRYPOINT ["python", "worker.py"]' in text
    requirements = text.index("pip install -r /tmp/requirements.txt")
    assert text.index("COPY pyproject.toml") < requirements < text.index("COPY interpreter ")
    assert text.index("COPY interpreter ") < text.index("pip install --no-deps .")


def test_worker_image_user_owns_the_spool_directory_its_volumes_mount() -> None:
    text = DOCKERFILE.read_text()
    assert re.search(r"useradd .*--uid 10001 ffl", text)
    assert "chown -R ffl:ffl /home/ffl/.ffl" in text
    assert text.index("chown -R ffl:ffl /home/ffl/.ffl") < text.index("USER ffl")
    services = load_compose()["services"]
    mounts = {services[name]["volumes"][0] for name in WORKERS}
    assert all(mount.endswith(":/home/ffl/.ffl") for mount in mounts)
    assert len({mount.split(":")[0] for mount in mounts}) == len(WORKERS)  # one spool per worker
    assert {mount.split(":")[0] for mount in mounts} <= set(load_compose()["volumes"])


def test_compose_uses_the_server_image_with_schema_and_namespace_jobs() -> None:
    services = load_compose()["services"]
    text = COMPOSE.read_text()
    assert "temporalio/auto-setup" not in text
    temporal = services["temporal"]
    assert temporal["image"].startswith("temporalio/server:")
    assert temporal["environment"]["DB"] == "postgres12"
    assert temporal["environment"]["POSTGRES_SEEDS"] in services
    assert temporal["depends_on"]["temporal-schema"]["condition"] == "service_completed_successfully"
    schema = services["temporal-schema"]
    assert schema["image"].startswith("temporalio/admin-tools:")
    script = schema["command"][0]
    for database, folder in (("temporal", "temporal"), ("temporal_visibility", "visibility")):
        assert database in script and "postgresql/v12/$$dir/versioned" in script and folder in script
    assert "setup-schema" in script and "update-schema" in script
    namespace = services["temporal-namespace"]
    assert "operator namespace create -n default" in namespace["command"][0]
    assert services["ffl-setup"]["depends_on"]["temporal-namespace"]["condition"] == \
        "service_completed_successfully"
    assert services["ffl-setup"]["command"] == ["ffl setup && ffl mirror-init"]
    assert services["temporal-ui"]["image"].startswith("temporalio/ui:")


def test_every_long_running_service_has_a_health_check_and_workers_wait_for_them() -> None:
    services = load_compose()["services"]
    for name in ("postgresql", "temporal", "temporal-ui", "mongo"):
        assert services[name]["healthcheck"]["test"], name
    for name in WORKERS:
        worker = services[name]
        assert worker["build"]["dockerfile"] == "docker/Dockerfile"
        assert (ROOT / worker["build"]["context"] / worker["build"]["dockerfile"]).is_file()
        assert worker["environment"]["TEMPORAL_ADDRESS"] == "temporal:7233"
        assert worker["depends_on"] == {"temporal": {"condition": "service_healthy"},
                                        "mongo": {"condition": "service_healthy"},
                                        "ffl-setup": {"condition": "service_completed_successfully"}}


def test_credentials_come_from_the_env_file_and_ports_stay_local() -> None:
    text = COMPOSE.read_text()
    services = load_compose()["services"]
    mongo = services["mongo"]["environment"]
    assert mongo["MONGO_INITDB_ROOT_USERNAME"].startswith("${MONGO_USER:?")
    assert mongo["MONGO_INITDB_ROOT_PASSWORD"].startswith("${MONGO_PASSWORD:?")
    assert services["postgresql"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    uri = services["ffl-interpreter"]["environment"]["MONGODB_URI"]
    assert uri.startswith("mongodb://${MONGO_USER:?") and "${MONGO_PASSWORD:?" in uri and "authSource=admin" in uri
    assert not re.search(r"PASSWORD:\s*\w+\s*$", text, re.M)  # no literal password anywhere
    for name in ("temporal", "temporal-ui", "mongo"):
        assert all(str(port).startswith("127.0.0.1:") for port in services[name]["ports"]), name
    assert set(re.findall(r"\$\{(\w+):\?", text)) <= set(env_example())
    assert ".env" in (ROOT / ".gitignore").read_text().split()
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored and ".git" in ignored and ".venv" in ignored


def test_dockerignore_keeps_what_the_dockerfile_copies() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#") and not line.startswith("!")}
    for sources in re.findall(r"^COPY (.+) \S+$", DOCKERFILE.read_text(), flags=re.M):
        for source in sources.split():
            top = source.split("/")[0]
            assert top not in ignored and source not in ignored, source


def test_interpreter_worker_mirrors_with_a_valid_config() -> None:
    worker = load_compose()["services"]["ffl-interpreter"]
    command = worker["command"]
    assert command[command.index("--task-queue") + 1] == "ffl"
    assert "--mongo" not in command  # the URI (with credentials) comes from MONGODB_URI, not the command line
    assert worker["environment"]["MONGODB_URI"].split("@")[1].startswith("mongo:27017/")
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


def _compose_client() -> list[str] | None:
    docker = shutil.which("docker")
    if docker and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0:
        return [docker, "compose"]
    legacy = shutil.which("docker-compose")
    return [legacy] if legacy else None


def test_compose_file_is_valid_where_a_compose_client_exists(tmp_path) -> None:
    """``docker compose config`` needs no engine; without any client the YAML checks above stand alone."""
    client = _compose_client()
    env = tmp_path / "env"
    env.write_text(ENV_EXAMPLE.read_text())
    if client is None:
        assert load_compose()["services"]  # parsed; nothing more to ask here
        return
    done = subprocess.run([*client, "--env-file", str(env), "-f", str(COMPOSE), "config"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    resolved = yaml.safe_load(done.stdout)
    assert "change-me-mongo" in resolved["services"]["ffl-interpreter"]["environment"]["MONGODB_URI"]
    (tmp_path / "empty").write_text("")
    missing = subprocess.run([*client, "--env-file", str(tmp_path / "empty"), "-f", str(COMPOSE), "config"],
                             capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert missing.returncode != 0 and "POSTGRES_PASSWORD" in missing.stderr + missing.stdout
