"""Type checks on a real dev server: strict by default, and ``type_checks: warn`` for migrating programs."""

from __future__ import annotations

from interpreter.program.config import RuntimeConfig

from .harness import FAST_RETRY, run_ffl

SOURCE = """namespace tc {
    event facet Count() => (n: Long, label: String)
    workflow Counted(n: Long) => (n: Long, label: String) andThen {
        c = Count()
        yield Counted(n = c.n, label = c.label)
    }
}
"""


def count(payload: dict) -> dict:
    return {"n": "seven", "label": 3}


async def test_a_handler_return_of_the_wrong_type_fails_its_step_by_default(temporal_client, tmp_path):
    run = await run_ffl(temporal_client, SOURCE, "tc.Counted", {"n": 1}, handlers={"tc.Count": count},
                        tmp_path=tmp_path)
    assert run.error is not None and run.error_type == "TypeError"
    assert "step 'b0/c' (tc.Count) failed" in run.message and "return 'n' expects Long" in run.message


async def test_type_checks_warn_passes_values_on_and_the_steps_query_shows_the_warning(temporal_client, tmp_path):
    from interpreter.cli.run_view import fetch_view
    from interpreter.cli.status_view import render

    status: list[str] = []

    async def read_status(handle) -> None:
        status.extend(render(await fetch_view(temporal_client, handle)))

    run = await run_ffl(temporal_client, SOURCE, "tc.Counted", {"n": "one"}, handlers={"tc.Count": count},
                        tmp_path=tmp_path, config=RuntimeConfig(retry=FAST_RETRY, type_checks="warn"),
                        inspect=read_status)
    assert run.error is None, run.message
    # ffl status shows the run's own warnings (its input and output), and each step's under the step
    run_level = [line for line in status if line.startswith("warning: ")]
    assert any(line.startswith("warning: workflow 'tc.Counted': ") for line in run_level), status
    assert any("the output does not fit" in line for line in run_level), status
    assert any(line.strip().startswith("warning: tc.Count: handler result") for line in status), status
    assert run.result == {"n": "seven", "label": 3}
    [step] = [s for s in run.steps if s["path"] == "b0/c"]
    assert step["state"] == "completed"
    assert any("return 'n' expects Long" in w and "type_checks is warn" in w for w in step["warnings"])


def test_ffl_run_with_type_checks_warn_prints_each_warning_after_the_result(temporal_service, tmp_path):
    import json
    import subprocess
    import sys

    from tests.paths import REPO

    (tmp_path / "tc.ffl").write_text(SOURCE)
    (tmp_path / "handlers.py").write_text("def count(p):\n    return {'n': 'seven', 'label': 3}\n\n\n"
                                          "def register_handlers(registry):\n    registry.register('tc.Count', count)\n")
    proc = subprocess.run([sys.executable, "-m", "interpreter", "run", str(tmp_path / "tc.ffl"), "--type", "tc.Counted",
                           "--input", '{"n": 1}', "--handlers", str(tmp_path / "handlers.py"), "--quiet",
                           "--config", '{"type_checks": "warn"}', "--address", temporal_service.address],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"n": "seven", "label": 3}
    lines = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert lines[0].startswith("warning: step 'b0/c': tc.Count: handler result does not fit the declared returns")
    assert lines[1].startswith("warning: tc.Counted: the output does not fit the declared returns")
