"""Drawings of a compiled workflow: steps as nodes, data dependencies as edges.

Nested blocks (andThen tails, foreach, when cases, catch) become subgraphs so
the drawing shows scopes as the language defines them. Output is Mermaid
``flowchart`` or Graphviz DOT text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..program.exprtext import expr_text
from ..program.model import Block, FacetDecl, Program, Step


class GraphError(ValueError):
    """The requested workflow does not exist or is not unique."""


@dataclass
class Cluster:
    id: str
    label: str
    nodes: list[tuple[str, str]] = field(default_factory=list)
    children: list[Cluster] = field(default_factory=list)

    def first_node(self) -> str | None:
        if self.nodes:
            return self.nodes[0][0]
        for child in self.children:
            found = child.first_node()
            if found:
                return found
        return None


@dataclass
class Edge:
    source: str
    target: str
    label: str = ""
    to_cluster: bool = False
    dotted: bool = False


@dataclass
class Graph:
    root: Cluster
    edges: list[Edge] = field(default_factory=list)


def _nid(path: str) -> str:
    return "n_" + re.sub(r"[^A-Za-z0-9]", "_", path)


def _label(text: str, limit: int = 60) -> str:
    text = text.replace('"', "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def find_workflow(program: Program, name: str) -> FacetDecl:
    """A workflow by qualified name or unique short name (else a facet by qualified name)."""
    workflows = program.workflows
    if name in workflows:
        return program.facets[name]
    short = [q for q in workflows if q.rsplit(".", 1)[-1] == name]
    if len(short) == 1:
        return program.facets[short[0]]
    if len(short) > 1:
        raise GraphError(f"workflow name '{name}' is ambiguous: " + ", ".join(short))
    if name in program.facets:
        return program.facets[name]
    listed = ", ".join(workflows) if workflows else "(none)"
    raise GraphError(f"unknown workflow '{name}'; available workflows: {listed}")


class _Builder:
    def __init__(self) -> None:
        self.edges: list[Edge] = []

    def blocks(self, blocks: list[Block], visible: dict[str, str], parent: Cluster, prefix: str,
               owner: str | None) -> None:
        regular: dict[int, dict[str, str]] = {}
        for index, block in enumerate(blocks):
            bid = f"{prefix}/b{index}"
            seen = dict(visible)
            for earlier in block.sees:
                for name, node in regular.get(earlier, {}).items():
                    seen.setdefault(name, node)
            cluster = self.block(block, seen, bid, f"andThen {block.kind}" if block.kind != "steps" else "andThen")
            parent.children.append(cluster)
            if owner:
                self.edges.append(Edge(owner, cluster.id, to_cluster=True))
            if block.kind == "steps":
                regular[index] = {s.name: _nid(s.id or f"{bid}/s{i}") for i, s in enumerate(block.steps)}

    def block(self, block: Block, visible: dict[str, str], bid: str, title: str) -> Cluster:
        cluster = Cluster(_nid(bid) + "_box", title)
        if block.kind == "foreach":
            head = _nid(f"{bid}/each")
            cluster.nodes.append((head, f"foreach {block.var} in {_label(expr_text(block.items))}"))
            self.refs(block.items_refs, visible, head)
            self.steps(block, dict(visible), cluster, bid)
        elif block.kind == "when":
            for index, case in enumerate(block.cases):
                cid = f"{bid}/c{index}"
                text = "case _" if case.condition is None else f"case {_label(expr_text(case.condition))}"
                inner = self.block(case.body, visible, cid, text)
                head = _nid(cid)
                inner.nodes.insert(0, (head, text))
                self.refs(case.refs, visible, head)
                cluster.children.append(inner)
        elif block.kind == "script":
            cluster.nodes.append((_nid(f"{bid}/script"), "script"))
        else:
            self.steps(block, dict(visible), cluster, bid)
        if cluster.first_node() is None:
            cluster.nodes.append((_nid(f"{bid}/empty"), "(empty)"))
        return cluster

    def steps(self, block: Block, visible: dict[str, str], cluster: Cluster, bid: str) -> None:
        for index, step in enumerate(block.steps):
            node = _nid(step.id or f"{bid}/s{index}")
            cluster.nodes.append((node, f"{step.name} = {step.call.facet or step.call.name}"))
            self.refs(step.refs, visible, node)
            visible[step.name] = node
            if step.blocks or step.catch is not None:
                self.tails(step, dict(visible), cluster, node)
        for index, item in enumerate(block.yields):
            node = _nid(f"{bid}/y{index}")
            cluster.nodes.append((node, f"yield {item.target or item.name}"))
            self.refs(item.refs, visible, node)

    def tails(self, step: Step, visible: dict[str, str], cluster: Cluster, node: str) -> None:
        prefix = step.id or node
        self.blocks(step.blocks, visible, cluster, prefix, node)
        if step.catch is not None:
            title = "catch when" if step.catch.block.kind == "when" else "catch"
            inner = self.block(step.catch.block, visible, f"{prefix}/catch", title)
            cluster.children.append(inner)
            self.edges.append(Edge(node, inner.id, "on error", to_cluster=True, dotted=True))

    def refs(self, refs: list[str], visible: dict[str, str], node: str) -> None:
        for name in refs:
            source = visible.get(name)
            if source is not None and source != node:
                self.edges.append(Edge(source, node))


def build_graph(decl: FacetDecl) -> Graph:
    root = Cluster(_nid(decl.qname), decl.qname)
    builder = _Builder()
    builder.blocks(decl.blocks, {}, root, decl.qname, None)
    if decl.catch is not None:
        root.children.append(builder.block(decl.catch.block, {}, f"{decl.qname}/catch", "catch"))
    if root.first_node() is None:
        root.nodes.append((_nid(f"{decl.qname}/empty"), "(no steps)"))
    return Graph(root, builder.edges)


def _find(cluster: Cluster, cid: str) -> Cluster | None:
    if cluster.id == cid:
        return cluster
    for child in cluster.children:
        found = _find(child, cid)
        if found:
            return found
    return None


def to_mermaid(graph: Graph) -> str:
    lines = ["flowchart TD"]

    def emit(cluster: Cluster, depth: int) -> None:
        pad = "    " * depth
        for node, label in cluster.nodes:
            lines.append(f'{pad}{node}["{_label(label, 200)}"]')
        for child in cluster.children:
            lines.append(f'{pad}subgraph {child.id}["{_label(child.label, 200)}"]')
            emit(child, depth + 1)
            lines.append(f"{pad}end")

    lines.append(f'subgraph {graph.root.id}["{graph.root.label}"]')
    emit(graph.root, 1)
    lines.append("end")
    for edge in graph.edges:
        arrow = "-.->" if edge.dotted else "-->"
        label = f"|{edge.label}|" if edge.label else ""
        lines.append(f"{edge.source} {arrow}{label} {edge.target}")
    return "\n".join(lines) + "\n"


def to_dot(graph: Graph) -> str:
    lines = ["digraph workflow {", "    compound=true;", "    node [shape=box];"]

    def emit(cluster: Cluster, depth: int) -> None:
        pad = "    " * depth
        for node, label in cluster.nodes:
            lines.append(f'{pad}{node} [label="{_label(label, 200)}"];')
        for child in cluster.children:
            lines.append(f"{pad}subgraph cluster_{child.id} {{")
            lines.append(f'{pad}    label="{_label(child.label, 200)}";')
            emit(child, depth + 1)
            lines.append(f"{pad}}}")

    lines.append(f'    label="{graph.root.label}";')
    emit(graph.root, 1)
    for edge in graph.edges:
        attrs = []
        target = edge.target
        if edge.to_cluster:
            cluster = _find(graph.root, edge.target)
            target = (cluster.first_node() if cluster else None) or edge.target
            attrs.append(f"lhead=cluster_{edge.target}")
        if edge.label:
            attrs.append(f'label="{edge.label}"')
        if edge.dotted:
            attrs.append("style=dashed")
        suffix = f" [{', '.join(attrs)}]" if attrs else ""
        lines.append(f"    {edge.source} -> {target}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(program: Program, workflow: str, fmt: str = "mermaid") -> str:
    """The drawing of ``workflow`` in ``fmt`` (``mermaid`` or ``dot``)."""
    graph = build_graph(find_workflow(program, workflow))
    if fmt == "dot":
        return to_dot(graph)
    if fmt == "mermaid":
        return to_mermaid(graph)
    raise GraphError(f"unknown graph format '{fmt}' (use mermaid or dot)")
