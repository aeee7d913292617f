"""Workflow drawings: every step a node, every reference an edge, nested blocks as subgraphs."""

from __future__ import annotations

import re

import pytest

from interpreter.compiler import compile_files, compile_sources
from interpreter.compiler.graph import GraphError, build_graph, find_workflow, render

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


@pytest.fixture(scope="module")
def program():
    return compile_sources([("g.ffl", PROGRAM)])


def edges(text: str) -> set[tuple[str, str]]:
    return set(re.findall(r"^(\w+) -[-.]+>(?:\|[^|]*\|)? (\w+)$", text, re.M))


def test_mermaid_nodes_edges_and_nesting(program):
    text = render(program, "W", "mermaid")
    found = edges(text)
    a, b, y = "n_g_W_b0_s0", "n_g_W_b0_s1", "n_g_W_b0_y0"
    assert {(a, b), (a, y), (b, y)} <= found
    assert (b, "n_g_W_b0_s1_b0_each") in found  # foreach items read b
    assert (b, "n_g_W_b0_s1_b0_s0") in found  # c reads b
    assert (a, "n_g_W_b1_c0") in found  # the when block sees block 0
    assert (b, "n_g_W_b0_s1_catch_box") in found
    stripped = [line.strip() for line in text.splitlines()]
    assert sum(line.startswith("subgraph ") for line in stripped) == stripped.count("end") == 9
    for label in ('"andThen foreach"', '"catch when"', '"andThen when"', '"case a.y > 1"', '"case _"'):
        assert label in text


def test_dot_is_balanced_and_uses_clusters(program):
    text = render(program, "g.W", "dot")
    assert text.count("{") == text.count("}")
    assert "subgraph cluster_n_g_W_b0_s1_b0_box" in text
    assert "n_g_W_b0_s0 -> n_g_W_b0_s1;" in text
    assert "lhead=cluster_n_g_W_b0_s1_catch_box" in text


def test_workflow_lookup(program):
    assert find_workflow(program, "W").qname == "g.W"
    with pytest.raises(GraphError, match="available workflows: g.W"):
        find_workflow(program, "Nope")
    with pytest.raises(GraphError, match="format"):
        render(program, "W", "svg")


def test_every_conformance_workflow_draws_every_step(conformance_folder):
    program = compile_files([str(conformance_folder)])
    for name in program.workflows:
        graph = build_graph(find_workflow(program, name))
        text = render(program, name, "mermaid")
        decl = program.facets[name]
        for block in decl.blocks:
            for step in block.steps:
                assert f'["{step.name} = {step.call.facet}"]' in text
        assert graph.root.label == name


def test_workflow_without_steps_still_draws_a_node():
    program = compile_sources([("e.ffl", "workflow Empty(a: Long) => (b: Long)\n")])
    text = render(program, "Empty", "mermaid")
    assert '["(no steps)"]' in text
    assert "(no steps)" in render(program, "Empty", "dot")
