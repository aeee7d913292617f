"""Stored programs are tamper-evident, publishing repairs them, and moving a workflow needs --replace.

The same rules for the directory store and the MongoDB store; ``ffl publish``
as a real process says what it repaired or replaced, and a run of an
altered program fails clearly instead of running it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pymongo
import pytest

from interpreter.activities.mirror import MongoProgramStore
from interpreter.activities.program_store import LocalProgramStore, ProgramTampered, PublishConflict
from interpreter.activities.redact import redact
from interpreter.program.serialize import content_hash

from .harness import compile_text, run_ffl

REPO = Path(__file__).resolve().parents[2]
V1 = "namespace p { workflow W() => (v: Long) andThen { yield W(v = 1) } }"
V2 = "namespace p { workflow W() => (v: Long) andThen { yield W(v = 2) } }"


@pytest.fixture(params=["directory", "mongo"])
def store(request, tmp_path):
    if request.param == "directory":
        yield LocalProgramStore(tmp_path / "registry")
        return
    mongo = request.getfixturevalue("mongo_service")
    name = request.getfixturevalue("mongo_db_name")
    with MongoProgramStore(mongo.extra["uri"], name) as opened:
        yield opened
    pymongo.MongoClient(mongo.extra["uri"]).drop_database(name)


def tamper(store, digest: str) -> None:
    """Edit the stored copy of program ``digest`` by hand, as an attacker or a careless editor would."""
    if isinstance(store, LocalProgramStore):
        path = store.root / "programs" / f"{digest}.json"
        path.write_text(path.read_text().replace('"value":1', '"value":666'))
        return
    flows = store._ready()["flows"]
    flow = flows.find_one({"program_hash": digest})
    sources = flow["compiled_sources"]
    sources[0]["content"] = sources[0]["content"].replace('"value":1', '"value":666')
    flows.update_one({"_id": flow["_id"]}, {"$set": {"compiled_sources": sources}})


def test_an_altered_program_is_refused_and_publishing_repairs_it(store):
    program = compile_text(V1)
    first = store.publish_report(program, publisher="alice@host")
    assert (first.hash, first.repaired, first.replaced) == (content_hash(program), False, {})
    tamper(store, first.hash)
    with pytest.raises(ProgramTampered, match=f"stored program {first.hash} has been altered"):
        store.load("p.W")
    with pytest.raises(ProgramTampered):
        store.load("p.W", first.hash)  # a run pinned to the hash is refused the altered copy too
    again = store.publish_report(program)
    assert again.repaired and again.hash == first.hash
    text, digest = store.load("p.W")
    assert digest == first.hash and '"value":1' in text


def test_moving_a_workflow_to_another_program_needs_replace(store):
    one, two = compile_text(V1), compile_text(V2)
    h1 = store.publish_report(one, publisher="team-a").hash
    assert store.publish_report(one, replace=False).replaced == {}  # the same program again is harmless
    with pytest.raises(PublishConflict) as info:
        store.publish_report(two, replace=False, publisher="team-b")
    assert f"'p.W' (program {h1})" in str(info.value) and "--replace" in str(info.value)
    assert store.load("p.W")[1] == h1  # nothing moved
    moved = store.publish_report(two, replace=True, publisher="team-b")
    assert moved.replaced == {"p.W": h1}
    assert store.load("p.W")[1] == content_hash(two)


def test_the_pointer_records_who_published_and_when(store):
    digest = store.publish_report(compile_text(V1), publisher="alice@example").hash
    if isinstance(store, LocalProgramStore):
        pointer = json.loads((store.root / "workflows" / "p.W.json").read_text())
        assert pointer["publisher"] == "alice@example" and pointer["published"].startswith("20")
        return
    db = store._ready()
    assert db.flows.find_one({"program_hash": digest})["publisher"]["name"] == "alice@example"
    assert db.workflows.find_one({"name": "p.W"})["publisher"] == "alice@example"


def test_names_that_are_no_qualified_name_or_hash_never_become_paths(store):
    store.publish(compile_text(V1))
    for workflow, digest in [("../../etc/passwd", None), ("p.W", "../p.W"), ("p.W/../x", None)]:
        with pytest.raises(LookupError):
            store.load(workflow, digest)


async def test_a_run_of_an_altered_program_fails_clearly(temporal_client, tmp_path):
    program = compile_text(V1)
    store = LocalProgramStore(tmp_path / "registry")
    digest = store.publish(program)
    tamper(store, digest)

    class Tampered(LocalProgramStore):  # run_ffl publishes first; alter after that
        def publish(self, prog):
            return digest

    import tests.runtime.harness as harness

    original = harness.LocalProgramStore
    harness.LocalProgramStore = Tampered
    try:
        run = await run_ffl(temporal_client, program, "p.W", tmp_path=tmp_path)
    finally:
        harness.LocalProgramStore = original
    assert run.error_type == "ProgramTampered"
    assert "has been altered since it was published" in run.message and "publish the program again" in run.message


def ffl(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def test_ffl_publish_says_what_it_replaces_and_repairs(tmp_path):
    registry = str(tmp_path / "registry")
    (tmp_path / "one.ffl").write_text(V1)
    (tmp_path / "two.ffl").write_text(V2)
    first = ffl("publish", str(tmp_path / "one.ffl"), "--registry", registry)
    assert first.returncode == 0, first.stderr
    h1 = first.stdout.split()[1]
    refused = ffl("publish", str(tmp_path / "two.ffl"), "--registry", registry)
    assert refused.returncode == 1
    assert f"'p.W' (program {h1})" in refused.stderr and "--replace" in refused.stderr
    replaced = ffl("publish", str(tmp_path / "two.ffl"), "--registry", registry, "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert f"workflow p.W now points at this program (it replaces program {h1})" in replaced.stdout
    h2 = replaced.stdout.split()[1]
    tamper(LocalProgramStore(registry), h1)
    path = Path(registry) / "programs" / f"{h2}.json"
    path.write_text(path.read_text().replace('"value":2', '"value":3'))
    repaired = ffl("publish", str(tmp_path / "two.ffl"), "--registry", registry)
    assert repaired.returncode == 0 and f"repaired the stored copy of program {h2}" in repaired.stdout
    assert LocalProgramStore(registry).load("p.W")[1] == h2


@pytest.mark.slow  # a real server in a process of its own
def test_ffl_publish_never_prints_the_password_of_a_mongodb_uri(tmp_path):
    (tmp_path / "one.ffl").write_text(V1)
    uri = "mongodb://alice:s3cr3t-pw@127.0.0.1:1/afl?serverSelectionTimeoutMS=300"
    done = ffl("publish", str(tmp_path / "one.ffl"), "--mongo", uri)
    assert done.returncode == 1 and "cannot publish to MongoDB at mongodb://***@127.0.0.1:1/afl" in done.stderr
    assert "s3cr3t-pw" not in done.stdout + done.stderr and "alice" not in done.stderr
    init = ffl("mirror-init", "--mongo", uri)
    assert init.returncode != 0 and "s3cr3t-pw" not in init.stdout + init.stderr
    status = ffl("status", "some-run", "--mongo", uri, "--address", "127.0.0.1:1")
    assert status.returncode != 0 and "s3cr3t-pw" not in status.stdout + status.stderr


@pytest.mark.parametrize("text, shown", [
    ("mongodb://alice:pw@db:27017/afl?authSource=admin", "mongodb://***@db:27017/afl?authSource=admin"),
    ("at mongodb+srv://u:p%40ss@x.net/?retryWrites=true&password=abc&w=1",
     "at mongodb+srv://***@x.net/?retryWrites=true&password=***&w=1"),
    ("mongodb://127.0.0.1:27017/afl", "mongodb://127.0.0.1:27017/afl"),
    ("https://token123@github.com/x and mongodb://a:b@h/", "https://***@github.com/x and mongodb://***@h/"),
    ("no uri here = fine", "no uri here = fine"),
])  # fmt: skip
def test_redact_hides_credentials_of_every_uri(text, shown):
    assert redact(text) == shown


@pytest.mark.parametrize("command", [["publish", "{dir}/big.ffl", "--registry", "{dir}/reg"],
                                     ["compile", "{dir}/big.ffl"]])
def test_a_closed_pipe_ends_a_command_quietly(tmp_path, command):
    workflows = "\n".join(f"workflow W{i}(a: Long, b: String) => (v: Long) andThen {{ yield W{i}(v = $.a) }}"
                          for i in range(1500))
    (tmp_path / "big.ffl").write_text(f"namespace big {{\n{workflows}\n}}")  # far more output than a pipe holds
    argv = [part.format(dir=tmp_path) for part in command]
    reader = f"{sys.executable} -c 'import sys; sys.stdin.buffer.read(10)'"  # reads a little, then goes away
    shell = f"{sys.executable} -m interpreter {' '.join(argv)} | {reader}; echo ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", shell], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.stdout.strip() in ("0", "141")  # 0 when the output fitted in the pipe before the reader left


def test_log_records_and_stderr_are_redacted(capsys):
    import io
    import logging

    from interpreter.activities.redact import RedactingFilter, RedactingStream

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("ffl.test.redact")
    logger.addHandler(handler)
    try:
        logger.warning("mirror at %s failed", "mongodb://bob:hunter2@db/afl")
    finally:
        logger.removeHandler(handler)
    assert stream.getvalue() == "mirror at mongodb://***@db/afl failed\n"
    out = io.StringIO()
    RedactingStream(out).write("error: mongodb://bob:hunter2@db/afl\n")
    assert out.getvalue() == "error: mongodb://***@db/afl\n"


def test_mirror_spools_are_readable_by_their_owner_only(tmp_path):
    from interpreter.activities.mirror import MirrorWriter

    writer = MirrorWriter("mongodb://127.0.0.1:1", "spooltest", spool_dir=tmp_path / "a" / "spool")
    try:
        writer.write([{"kind": "log", "workflow_id": "w", "run_id": "r", "path": "", "message": "secret params"}])
    finally:
        writer.close(timeout=0.5)
    created = [tmp_path / "a", tmp_path / "a" / "spool", *(tmp_path / "a" / "spool").glob("*.jsonl")]
    assert len(created) == 3
    for path in created:
        assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
