"""How runs read to a person: steps as written, readable paths, summaries, memo and search attributes."""

from __future__ import annotations

from interpreter.compiler import compile_sources
from interpreter.program.display import (
    SUMMARY_LIMIT,
    activity_summary,
    current_details,
    program_details,
    program_line,
    readable_path,
    step_text,
)
from interpreter.program.runinfo import run_memo, run_search_attributes, source_files

SOURCE = """namespace calc {
    facet Opts(n: Long = 1) => ()
    event facet Add(x: Long, y: Long) => (sum: Long)
    workflow Double(a: Long) => (total: Long) andThen {
        s = Add(x = $.a, y = $.a * 2 + 1) with Opts(n = 3)
        yield Double(total = s.sum)
    }
}
"""


def test_step_text_is_the_step_as_written_with_the_qualified_facet():
    program = compile_sources([("calc.ffl", SOURCE)])
    step = program.facets["calc.Double"].blocks[0].steps[0]
    assert step_text(step) == "s = calc.Add(x = $.a, y = $.a * 2 + 1) with calc.Opts(n = 3)"
    short = step_text(step, limit=20)
    assert len(short) == 20 and short.endswith("…")


def test_readable_path_drops_block_indices_and_names_cases():
    assert readable_path("b0/all/b0/foreach[2]/who/b0/c1/casual", "Greet") == \
        "Greet › all › foreach[2] › who › case 1 › casual"
    assert readable_path("", "Greet") == "Greet"
    assert readable_path("b1/x/catch/y") == "x › catch › y"


def test_activity_summary_is_one_bounded_line():
    text = activity_summary("s = calc.Add(x = $.a)", "b0/foreach[3]/s", "Double")
    assert text == "s = calc.Add(x = $.a) · Double › foreach[3] › s"
    long = activity_summary("s = F(" + "x" * 400 + ")", "b0/s", "W")
    assert len(long) == SUMMARY_LIMIT and "\n" not in long


def test_run_summary_and_details_name_program_hash_and_sources():
    line = program_line("hello.Greet", "ab" * 32, ["examples/hello/program.ffl"])
    assert line == "hello.Greet · program abababababab · program.ffl"
    details = program_details("hello.Greet", "ab" * 32, ["a.ffl", "b.ffl"], "hello")
    assert "`hello.Greet` in namespace `hello`" in details and "`" + "ab" * 32 + "`" in details
    assert "`a.ffl`, `b.ffl`" in details
    progress = current_details("**h**", {"completed": 2, "caught": 1, "running": 1, "failed": 0, "cancelled": 1},
                               "calc.Add at Double › s")
    assert progress == "**h**\n\nsteps: 3 done, 1 running, 0 failed, 1 cancelled · current: calc.Add at Double › s"


def test_memo_and_search_attributes_of_a_run():
    assert run_memo("osm.cache.Import", "h1", ["a.ffl"]) == {
        "ffl_workflow": "osm.cache.Import", "ffl_namespace": "osm.cache", "ffl_program_hash": "h1",
        "ffl_sources": ["a.ffl"]}
    assert run_search_attributes("osm.Import", "h1") == {
        "FflWorkflow": "osm.Import", "FflProgramHash": "h1", "FflNamespace": "osm"}
    assert run_search_attributes("Top", "h1") == {"FflWorkflow": "Top", "FflProgramHash": "h1"}


def test_source_files_are_read_from_locations():
    program = compile_sources([("b.ffl", "namespace b { event facet E() => () }"),
                               ("a.ffl", SOURCE)])
    assert source_files(program.model_dump(mode="json")) == ["a.ffl", "b.ffl"]
    assert source_files({"loc": None, "x": [1, {"y": 2}]}) == []


def test_a_run_on_another_queue_than_ffl_is_told_to_use_ffl_or_an_interpreter_worker():
    from interpreter.cli.run_view import no_interpreter

    assert no_interpreter("ffl").endswith("(start one: python worker.py --task-queue ffl)")
    hint = no_interpreter("calc")
    assert "start runs with --task-queue ffl" in hint and hint.endswith("python worker.py --task-queue calc --interpreter")


def test_durations_read_as_a_person_says_them():
    from interpreter.program.display import duration_text

    assert [duration_text(s) for s in (5, 1.5, 60, 3600, 5400, 86400)] == ["5 s", "1.5 s", "1 min", "1 h",
                                                                           "1 h 30 min", "1 d"]


def test_an_iterations_path_says_which_element_it_handles():
    from interpreter.program.display import activity_summary, item_text, readable_path

    items = {"b0/all/b0/foreach[3]": item_text("file", "corrupt.csv")}
    assert readable_path("b0/all/b0/foreach[3]/d", "Nightly", items) == 'Nightly › all › foreach[3] file="corrupt.csv" › d'
    assert readable_path("b0/all/b0/foreach[2]/d", "Nightly", items) == "Nightly › all › foreach[2] › d"
    assert activity_summary("ffl.Sleep(5 s)", "b1/c0/hold", "Nightly") == "ffl.Sleep(5 s) · Nightly › case 0 › hold"
    assert len(item_text("f", "x" * 500)) < 50
    assert item_text("r", {"id": 3, "name": "ada"}) == 'r={"id":3,"name":"ada"}'
    assert item_text("r", {"blob": "x" * 10**6}) == "r={1 key}"  # never dumps a large element
    assert item_text("xs", list(range(100))) == "xs=[100 items]"


def test_ffl_status_shows_a_steps_type_check_warnings_under_it_and_in_json():
    from interpreter.cli.run_view import RunView
    from interpreter.cli.status_view import step_rows, to_json, tree_lines

    warning = "tc.Count: handler result does not fit the declared returns: ... (passed on: type_checks is warn)"
    view = RunView("tc.Counted", "wf", "run", "completed", steps=[
        {"path": "b0/c", "facet": "tc.Count", "state": "completed", "returns": {"n": "seven"}, "error": None,
         "warnings": [warning]}])
    assert tree_lines(step_rows(view))[1:] == [f"  warning: {warning}"]
    assert to_json(view)["steps"][0]["warnings"] == [warning]


def test_ffl_status_shows_the_runs_own_warnings_after_its_header_and_in_json():
    from interpreter.cli.run_view import RunView
    from interpreter.cli.status_view import render, to_json

    warnings = [{"path": "", "message": "tc.W: the output does not fit ..."}, {"path": "b0/c", "message": "step's"}]
    view = RunView("tc.W", "wf", "run", "completed", steps=[], warnings=warnings)
    lines = render(view)
    assert "warning: tc.W: the output does not fit ..." in lines
    assert not any("step's" in line for line in lines)  # a step's warning is shown under its step
    assert to_json(view)["warnings"] == warnings
