"""``ffl run`` and ``ffl check`` on odd input: each gives a clear message (never a traceback) and a sensible status.

Runs go through real ``ffl`` subprocesses against the session dev server, the
way an outside harness drives the product; ``check`` runs in-process (no server).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from interpreter.cli import run as ffl_main
from tests import conformance_suite as suite
from tests.paths import REPO

OSM = suite.VALID / "osm_pipeline"

ODD = """
namespace odd {
    event facet Now(x: Long) => (v: Json)
    event facet Bag(x: Long) => (v: Json)
    event facet Nothing(x: Long) => (v: Json)

    /** No parameter without a default: runs without --input. */
    workflow Values(text: String = "") => (stamp: Json, bag: Json, text: String, size: Long) andThen {
        n = Now(x = 1)
        b = Bag(x = 2)
        z = Nothing(x = 3)
        yield Values(stamp = n.v, bag = b.v, text = "héllo ✓ 日本 " ++ $.text ++ z.v, size = 1)
    }
}
"""

ODD_HANDLERS = """
import datetime

def register_handlers(registry):
    registry.register("odd.Now", lambda p: {"v": datetime.datetime(2024, 1, 2, 3, 4, 5)})
    registry.register("odd.Bag", lambda p: {"v": {p["x"]}})
    registry.register("odd.Nothing", lambda p: {"v": None})
"""

# Wraps the osm_pipeline case's handlers: Download fails the first time it sees each url.
FLAKY_OSM_HANDLERS = f"""
import importlib.util

_spec = importlib.util.spec_from_file_location("osm_case_handlers", {str(OSM / "handlers.py")!r})
_case = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_case)
_seen = set()

def flaky_download(p):
    if p["url"] not in _seen:
        _seen.add(p["url"])
        raise ConnectionError("mirror reset the connection")
    return _case.download(p)

def register_handlers(registry):
    class Swap:
        def register(self, name, fn):
            registry.register(name, flaky_download if name == "osm.cache.Download" else fn)
    _case.register_handlers(Swap())
"""


def ffl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "interpreter", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


def assert_no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr


def test_run_retries_a_flaky_handler_with_the_default_policy(temporal_service, tmp_path):
    """A handler failing once succeeds on its retry: the pipeline's result is the case's, no catch runs."""
    handlers = tmp_path / "flaky.py"
    handlers.write_text(FLAKY_OSM_HANDLERS)
    case = suite.cases_of(suite.folder(OSM.name))[0]
    proc = ffl("run", str(OSM), "--workflow", case.workflow, "--input", json.dumps(case.inputs),
               "--handlers", str(handlers), "--address", temporal_service.address)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    case.check(json.loads(proc.stdout), None)


def test_run_without_input_and_with_non_json_handler_values(temporal_service, tmp_path):
    program, handlers = tmp_path / "odd.ffl", tmp_path / "handlers.py"
    program.write_text(ODD, encoding="utf-8")
    handlers.write_text(ODD_HANDLERS)
    base = ("run", str(program), "--workflow", "odd.Values", "--handlers", str(handlers),
            "--address", temporal_service.address)  # fmt: skip
    proc = ffl(*base)  # --input omitted
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result == {"stamp": "2024-01-02T03:04:05", "bag": [2], "text": "héllo ✓ 日本 ", "size": 1}

    long_text = "é✓" * 100_000  # a long unicode input, through a file
    (tmp_path / "input.json").write_text(json.dumps({"text": long_text}), encoding="utf-8")
    proc = ffl(*base, "--input", "@" + str(tmp_path / "input.json"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    # over 512 kB: the SDK core warns about the payload size, on stderr (only with -v), never on stdout
    assert json.loads(proc.stdout)["text"] == "héllo ✓ 日本 " + long_text


def test_run_refuses_bad_handlers_and_inputs_before_starting(tmp_path):
    """Problems found before any server starts: exit status 2, one clear line, no traceback."""
    program = tmp_path / "odd.ffl"
    program.write_text(ODD, encoding="utf-8")
    raising = tmp_path / "raising.py"
    raising.write_text('raise RuntimeError("boom at import")\n')
    broken = tmp_path / "broken.py"
    broken.write_text("def register_handlers(registry)\n    pass\n")
    run = ("run", str(program), "--workflow", "odd.Values", "--address", "127.0.0.1:1")
    for extra, words in (
        (("--handlers", str(raising)), ["boom at import", "RuntimeError"]),
        (("--handlers", str(broken)), ["broken.py", "SyntaxError"]),
        (("--input", "{not json"), ["--input"]),
        (("--input", "[1, 2]"), ["JSON object"]),
        (("--input", "@" + str(tmp_path / "missing.json")), ["missing.json"]),
    ):
        proc = ffl(*run, *extra)
        assert proc.returncode == 2, (extra, proc.stderr)
        assert_no_traceback(proc)
        assert all(w in proc.stderr for w in words), (extra, proc.stderr)


def check(capsys, *paths: Path) -> tuple[int, str]:
    status = ffl_main(["check", *map(str, paths)])
    out = capsys.readouterr()
    return status, out.out + out.err


def test_check_on_empty_and_comment_only_files(tmp_path, capsys):
    empty, comments = tmp_path / "empty.ffl", tmp_path / "comments.ffl"
    empty.write_text("")
    comments.write_text("// only a comment\n/* block */\n/** a doc comment with nothing after it */\n")
    for path in (empty, comments):
        status, text = check(capsys, path)
        assert status == 0 and "ok: 1 file, 0 workflows" in text, text


def test_check_reports_unreadable_inputs_as_diagnostics(tmp_path, capsys):
    (tmp_path / "nothing").mkdir()
    status, text = check(capsys, tmp_path / "nothing")
    assert status == 1 and "holds no .ffl files" in text, text

    latin = tmp_path / "latin.ffl"
    latin.write_bytes(b'namespace a {\n    facet F(x: String = "caf\xe9")\n}\n')
    status, text = check(capsys, latin)
    assert status == 1 and f"{latin}:2:" in text and "not UTF-8" in text, text  # the line of the bad byte

    status, text = check(capsys, tmp_path / "absent.ffl")
    assert status == 1 and "cannot read file" in text, text


def test_check_accepts_a_byte_order_mark(tmp_path, capsys):
    bom = tmp_path / "bom.ffl"
    bom.write_bytes("namespace a {\n    workflow W() => (s: String) andThen { yield W(s = \"é\") }\n}\n"
                    .encode("utf-8-sig"))  # fmt: skip
    status, text = check(capsys, bom)
    assert status == 0 and "1 workflow" in text, text
    bad = tmp_path / "bad.ffl"
    bad.write_bytes("namespace a {\n    facet F(x: Nope)\n}\n".encode("utf-8-sig"))
    status, text = check(capsys, bad)
    assert status == 1 and f"{bad}:2:" in text, text  # lines still count from the first
