"""``ffl test``: test files are checked line by line, broken expectations reported at their file:line."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path

import pytest

from interpreter.cli import run as ffl
from interpreter.testing.files import TestFileError, load
from interpreter.testing.suite import run_files

CALC_TEST = """\
tests:
  - name: doubles
    workflow: calc.Double
    inputs: {a: 2}
    mocks:
      calc.Add: {returns: {sum: 4}}
    expect:
      outputs: {total: 5}
      calls:
        calc.Add: [{x: 2, y: 3}]
"""


@pytest.fixture
def calc_folder(tmp_path: Path) -> Path:
    shutil.copy("examples/calc/calc.ffl", tmp_path / "calc.ffl")
    return tmp_path


def run(paths: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    report = asyncio.run(run_files(paths, out))
    return report.status, out.getvalue()


def test_the_examples_pass_and_report_their_coverage():
    status, text = run(["examples"])
    assert status == 0
    assert "FFL coverage: 15/15 places (100.0%)" in text
    assert text.rstrip().splitlines()[-1].startswith("=== 9 passed in ")


def test_each_broken_expectation_is_one_line_at_its_file_and_line(calc_folder: Path):
    (calc_folder / "calc.test.yaml").write_text(CALC_TEST)
    status, text = run([str(calc_folder)])
    assert status == 1
    assert f"{calc_folder}/calc.test.yaml:8: doubles: output 'total': expected 5, got 4" in text
    assert f"{calc_folder}/calc.test.yaml:10: doubles: calc.Add call 1: argument 'y': expected 3, got 2" in text
    assert "=== 1 failed, 0 passed in " in text


def test_an_expected_failure_that_does_not_happen_is_reported(calc_folder: Path):
    (calc_folder / "calc.test.yaml").write_text(CALC_TEST.replace("outputs: {total: 5}", "failure: {type: X}")
                                                .replace("x: 2, y: 3", "x: 2, y: 2"))
    status, text = run([str(calc_folder)])
    assert status == 1
    assert "calc.test.yaml:8: doubles: expected a failure, but the run returned {'total': 4}" in text


@pytest.mark.parametrize(("text", "line", "words"), [
    ("tests:\n  - name: t\n    workflow: calc.Double\n    expects: {}\n", 4, "a test has no key 'expects'"),
    ("tests:\n  - name: t\n    workflow: calc.Double\n    mocks:\n      calc.Add: {return: {sum: 1}}\n", 5,
     "mock of calc.Add must be 'real' or one of returns:, raises:, sequence:"),
    ("tests:\n  - name: t\n    workflow: calc.Double\n    signals: [{name: go, at: soon}]\n", 4,
     "a signal needs a 'name' and, optionally, 'at' in seconds"),
    ("tests: [\n", 2, "not valid YAML"),
    ("tests:\n  - name: t\n    workflow: calc.Double\n    expect:\n      outputs: [1]\n", 5,
     "t: 'expect.outputs' must be a mapping"),
])
def test_a_mistake_in_a_test_file_names_its_line(calc_folder: Path, text: str, line: int, words: str):
    path = calc_folder / "calc.test.yaml"
    path.write_text(text)
    with pytest.raises(TestFileError) as caught:
        load(path)
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert words in str(caught.value)


def test_a_test_mocking_no_such_facet_is_an_error_of_that_test(calc_folder: Path):
    (calc_folder / "calc.test.yaml").write_text(CALC_TEST.replace("calc.Add: {returns", "calc.Sub: {returns"))
    status, text = run([str(calc_folder)])
    assert status == 2
    assert "calc.test.yaml:2: doubles: mocks name calc.Sub, not an event facet of the program" in text


def test_the_command_exits_like_pytest_and_writes_coverage_json(calc_folder: Path, capsys):
    (calc_folder / "calc.test.yaml").write_text(CALC_TEST.replace("total: 5", "total: 4").replace("y: 3", "y: 2"))
    report = calc_folder / "coverage.json"
    assert ffl(["test", str(calc_folder), "--coverage-json", str(report)]) == 0
    assert json.loads(report.read_text())["missed"] == []
    assert "=== 1 passed in " in capsys.readouterr().out
    assert ffl(["test", str(calc_folder / "nothing-here")]) == 2
