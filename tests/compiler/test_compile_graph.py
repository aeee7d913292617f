"""Workflow drawings: every step a node, every reference an edge, nested blocks as subgraphs, run states."""

from __future__ import annotations

import re

import pytest

from interpreter.compiler import compile_files, compile_sources
from interpreter.compiler.graph import (
    GraphError,
    apply_states,
    build_graph,
    find_workflow,
    pattern_of,
    render,
    to_mermaid,
)

PROGRAM = """namespace g {
    event facet E(x: Long) => (y: Long)
    workflow W(n: Long) => (r: Long) andThen {
        a = E(x = $.n)
        b = E(x = a.y) andThen foreach v in [a.y, b.y] {
            c = E(x = $.v + b.y)
        } catch when {
            case b.error_type == "X" => { d = E(x = 0) }
            case _ => { }
        }
        yield W(r = a.y + b.y)
    } andThen when {
        case a.y > 1 => { e = E(x = a.y) }
        case _ => { }
    }
}
"""


COMPOSED = """namespace h {
    event facet Look(name: String) => (formal: Boolean)
    event facet Say(name: String) => (text: String)
    facet All(names: Json) => (lines: Json = []) andThen foreach n in $.names {
        who = Look(name = $.n) andThen when {
            case who.formal => { f = Say(name = $.n) yield All(lines = [f.text]) }
            case _ => { c = Say(name = $.n) yield All(lines = [c.text]) }
        }
    }
    workflow Greet(names: Json) => (lines: Json) andThen {
        all = All(names = $.names)
        yield Greet(lines = all.lines)
    }
}
"""


@pytest.fixture(scope="module")
def program():
    return compile_sources([("g.ffl", PROGRAM)])


@pytest.fixture(scope="module")
def composed():
    return compile_sources([("h.ffl", COMPOSED)])


def edges(text: str) -> set[tuple[str, str]]:
    return set(re.findall(r"^(\w+) -[-.]+>(?:\|[^|]*\|)? (\w+)$", text, re.M))


def test_mermaid_nodes_edges_and_nesting(program):
    text = render(program, "W", "mermaid")
    found = edges(text)
    a, b, y = "n_b0_a", "n_b0_b", "n_b0_yield_0"
    assert {(a, b), (a, y), (b, y)} <= found
    assert (b, "n_b0_b_b0_foreach") in found  # foreach items read b
    assert (b, "n_b0_b_b0_foreach____c") in found  # c reads b
    assert (a, "n_b1_when") in found  # the when block sees block 0
    assert (b, "n_b0_b_catch_box") in found
    stripped = [line.strip() for line in text.splitlines()]
    assert sum(line.startswith("subgraph ") for line in stripped) == stripped.count("end") == 9
    for label in ('"andThen foreach v"', '"catch when"', '"andThen when"', '"case a.y > 1"', '"case _"'):
        assert label in text


def test_foreach_header_points_at_the_steps_of_each_iteration(program):
    found = edges(render(program, "W", "mermaid"))
    assert ("n_b0_b_b0_foreach", "n_b0_b_b0_foreach____c") in found


def test_when_cases_are_drawn_once_and_reached_from_the_when_node(program):
    text = render(program, "W", "mermaid")
    assert text.count("case a.y > 1") == 1 and text.count("case _") == 2  # one per when block
    found = edges(text)
    assert {("n_b1_when", "n_b1_c0_box"), ("n_b1_when", "n_b1_c1_box")} <= found
    assert 'n_b1_when{"when"}' in text


def test_event_composed_blocks_and_yields_have_distinct_shapes(composed):
    text = render(composed, "Greet", "mermaid")
    assert 'n_b0_all[["all = h.All"]]' in text  # composed facet: subroutine box
    assert 'n_b0_all_b0_foreach____who["who = h.Look"]' in text  # event facet: plain box
    assert 'n_b0_all_b0_foreach{{"foreach n in $.names"}}' in text
    assert '[/"yield h.Greet(lines)"/]' in text
    assert 'subgraph n_b0_all_body["h.All body"]' in text  # the composed body, inlined at its step
    dot = render(composed, "Greet", "dot")
    assert "n_b0_all [label=\"all = h.All\", shape=box, peripheries=2];" in dot
    assert 'shape=hexagon' in dot and 'shape=diamond' in dot and 'shape=parallelogram' in dot
    flat = render(composed, "Greet", "mermaid", expand=False)
    assert "h.All body" not in flat and "who = h.Look" not in flat


def test_dot_is_balanced_and_uses_clusters(program):
    text = render(program, "g.W", "dot")
    assert text.count("{") == text.count("}")
    assert "subgraph cluster_n_b0_b_b0_box" in text
    assert "n_b0_a -> n_b0_b;" in text
    assert "lhead=cluster_n_b0_b_catch_box" in text


def test_dot_is_accepted_by_graphviz_when_installed(composed):
    """Graphviz parses the DOT text (where it is installed; the svg format needs it)."""
    import shutil
    import subprocess

    from interpreter.cli.status_cmds import StatusError, svg_from_dot

    text = render(composed, "Greet", "dot")
    if shutil.which("dot"):
        assert svg_from_dot(text).lstrip().startswith("<?xml")
        done = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
    else:
        with pytest.raises(StatusError, match="needs Graphviz's 'dot' on PATH"):
            svg_from_dot(text)
        with pytest.raises(StatusError, match="--format svg needs .*; --format dot prints the DOT text"):
            svg_from_dot(text, "--format")  # ffl graph's flag, not ffl status's --graph


def test_run_states_colour_nodes_and_count_iterations(composed):
    graph = build_graph(find_workflow(composed, "Greet"), composed)
    states = {
        "b0/all": "running",
        "b0/all/b0/foreach[0]/who": "done", "b0/all/b0/foreach[1]/who": "done",
        "b0/all/b0/foreach[2]/who": "failed",
        "b0/all/b0/foreach[0]/who/b0/c0/f": "done", "b0/all/b0/foreach[1]/who/b0/c1/c": "running",
    }
    apply_states(graph, states, closed=False)
    nodes = {node.id: node for node in graph.nodes()}
    assert nodes["n_b0_all"].state == "running"
    who = nodes["n_b0_all_b0_foreach____who"]
    assert who.state == "failed" and who.note == "✗1 ✓2"
    head = nodes["n_b0_all_b0_foreach"]
    assert head.state == "failed" and head.note.startswith("3 iterations")
    assert nodes["n_b0_all_b0_foreach____who_b0_c0_f"].state == "done"
    assert nodes["n_b0_all_b0_foreach____who_b0_c1_c"].state == "running"
    assert nodes["n_b0_all_b0_foreach____who_b0_when"].state == "running"
    text = to_mermaid(graph)
    assert "classDef failed fill:#ffcdd2" in text
    assert re.search(r"^class .*n_b0_all_b0_foreach____who\b.* failed$", text, re.M)
    closed = apply_states(build_graph(find_workflow(composed, "Greet"), composed), {"b0/all": "cancelled"},
                          closed=True)
    assert {n.id: n.state for n in closed.nodes()}["n_b0_all_b0_foreach____who"] == "skipped"
    assert pattern_of("b0/x/foreach[12]/y/foreach[3]/z") == "b0/x/foreach[*]/y/foreach[*]/z"


def test_workflow_lookup(program):
    assert find_workflow(program, "W").qname == "g.W"
    with pytest.raises(GraphError, match="available workflows: g.W"):
        find_workflow(program, "Nope")
    with pytest.raises(GraphError, match="format"):
        render(program, "W", "png")


def test_every_conformance_workflow_draws_every_step(conformance_folder):
    program = compile_files([str(conformance_folder)])
    for name in program.workflows:
        graph = build_graph(find_workflow(program, name), program)
        text = render(program, name, "mermaid")
        decl = program.facets[name]
        for block in decl.blocks:
            for step in block.steps:
                assert f'"{step.name} = {step.call.facet}"' in text
        assert graph.root.label == name
        stripped = [line.strip() for line in text.splitlines()]
        assert sum(line.startswith("subgraph ") for line in stripped) == stripped.count("end")


def test_workflow_without_steps_still_draws_a_node():
    program = compile_sources([("e.ffl", "workflow Empty(a: Long) => (b: Long)\n")])
    text = render(program, "Empty", "mermaid")
    assert '["(no steps)"]' in text
    assert "(no steps)" in render(program, "Empty", "dot")
