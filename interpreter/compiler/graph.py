"""Drawings of a compiled workflow: steps as nodes, data dependencies as edges, optionally a run's states.

Nested blocks (andThen tails, foreach, when cases, catch) and the bodies of
composed facets become subgraphs, so the drawing shows scopes as the language
defines them. Each kind of node has its own shape: event facets (handler
calls) are boxes, composed facets are double-framed, schema records are
rounded, ``foreach`` a hexagon that points at the steps of each iteration,
``when`` a diamond that points at its cases, yields parallelograms, scripts
notes. Every node knows the runtime path pattern of its step
(``b0/all/b0/foreach[*]/who``), so ``apply_states`` can colour a drawing by a
run's step records, summarising foreach iterations with counts. Output is
Mermaid ``flowchart`` or Graphviz DOT text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..program.exprtext import expr_text
from ..program.model import Block, FacetDecl, Program, Step

MAX_EXPANSION = 4
"""Composed facets nested deeper than this are drawn as one node, not expanded."""

STATE_ORDER = ("failed", "running", "waiting", "cancelled", "done", "skipped")
"""A node summarising several step records shows the first state of this list that any has."""

STATE_COLOURS = {
    "done": ("#c8e6c9", "#2e7d32"), "running": ("#bbdefb", "#1565c0"), "waiting": ("#fff9c4", "#f9a825"),
    "failed": ("#ffcdd2", "#c62828"), "skipped": ("#eeeeee", "#9e9e9e"), "cancelled": ("#ffe0b2", "#ef6c00"),
}
"""Fill and stroke colour of each state."""

MARKS = {"done": "✓", "running": "…", "waiting": "◷", "failed": "✗", "skipped": "-", "cancelled": "⊘"}

_MERMAID_SHAPES = {
    "event": ('["', '"]'), "composed": ('[["', '"]]'), "record": ('(["', '"])'), "foreach": ('{{"', '"}}'),
    "when": ('{"', '"}'), "yield": ('[/"', '"/]'), "script": ('>"', '"]'), "note": ('["', '"]'),
}
_DOT_SHAPES = {
    "event": 'shape=box, style="rounded"', "composed": "shape=box, peripheries=2", "record": "shape=ellipse",
    "foreach": "shape=hexagon", "when": "shape=diamond", "yield": "shape=parallelogram", "script": "shape=note",
    "note": "shape=plaintext",
}
_CLUSTER_STYLE = {  # (mermaid style, dot style)
    "body": ("fill:#fafafa,stroke:#616161", 'style="rounded", color="#616161"'),
    "foreach": ("fill:#f3e5f5,stroke:#6a1b9a", 'style="rounded,filled", fillcolor="#f3e5f5", color="#6a1b9a"'),
    "when": ("fill:#fff8e1,stroke:#ff8f00", 'style="rounded", color="#ff8f00"'),
    "case": ("fill:#fffde7,stroke:#ffb300", 'style="dotted", color="#ffb300"'),
    "catch": ("fill:#fbe9e7,stroke:#d84315,stroke-dasharray:5 5", 'style="dashed", color="#d84315"'),
    "andThen": ("fill:#ffffff,stroke:#9e9e9e", 'color="#9e9e9e"'),
    "workflow": ("fill:#ffffff,stroke:#212121", 'color="#212121"'),
}
_ITERATION = re.compile(r"foreach\[\d+\]")


class GraphError(ValueError):
    """The requested workflow does not exist or is not unique."""


@dataclass
class Node:
    id: str
    label: str
    kind: str
    pattern: str | None = None  # runtime path of its step(s), foreach indices as [*]
    state: str | None = None
    note: str = ""  # counts under the label once states are applied


@dataclass
class Cluster:
    id: str
    label: str
    kind: str = "andThen"
    nodes: list[Node] = field(default_factory=list)
    children: list[Cluster] = field(default_factory=list)

    def first_node(self) -> str | None:
        if self.nodes:
            return self.nodes[0].id
        for child in self.children:
            found = child.first_node()
            if found:
                return found
        return None

    def walk(self) -> Iterable[Node]:
        yield from self.nodes
        for child in self.children:
            yield from child.walk()


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

    def nodes(self) -> list[Node]:
        return list(self.root.walk())


def _nid(path: str) -> str:
    return "n_" + re.sub(r"[^A-Za-z0-9]", "_", path)


def _join(path: str, part: str) -> str:
    return f"{path}/{part}" if path else part


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
    def __init__(self, program: Program | None, expand: bool) -> None:
        self.program = program
        self.expand = expand and program is not None
        self.edges: list[Edge] = []
        self.stack: list[str] = []  # composed facets being expanded (no recursion)

    def blocks(self, blocks: list[Block], visible: dict[str, str], parent: Cluster, path: str,
               owner: str | None) -> None:
        regular: dict[int, dict[str, str]] = {}
        for index, block in enumerate(blocks):
            bpath = _join(path, f"b{index}")
            seen = dict(visible)
            for earlier in block.sees:
                for name, node in regular.get(earlier, {}).items():
                    seen.setdefault(name, node)
            title = {"steps": "andThen", "foreach": f"andThen foreach {block.var}", "when": "andThen when",
                     "script": "andThen script"}[block.kind]
            cluster = self.block(block, seen, bpath, title)
            parent.children.append(cluster)
            if owner:
                self.edges.append(Edge(owner, cluster.id, to_cluster=True))
            if block.kind == "steps":
                regular[index] = {s.name: _nid(_join(bpath, s.name)) for s in block.steps}

    def block(self, block: Block, visible: dict[str, str], bpath: str, title: str, kind: str = "") -> Cluster:
        """The cluster of one block whose steps run at ``bpath/<name>`` (iterations: ``bpath/foreach[i]``)."""
        cluster = Cluster(_nid(bpath) + "_box", title, kind or ("foreach" if block.kind == "foreach" else
                                                                "when" if block.kind == "when" else "andThen"))
        if block.kind == "foreach":
            head = _nid(_join(bpath, "foreach"))
            items = expr_text(block.items) if block.items is not None else "[]"
            cluster.nodes.append(Node(head, f"foreach {block.var} in {_label(items)}", "foreach",
                                      _join(bpath, "foreach")))
            self.refs(block.items_refs, visible, head)
            roots = self.steps(block, dict(visible), cluster, _join(bpath, "foreach[*]"))
            for root in roots:  # the header starts every iteration's first steps
                self.edges.append(Edge(head, root, dotted=True))
        elif block.kind == "when":
            head = _nid(_join(bpath, "when"))
            cluster.nodes.append(Node(head, "when", "when", _join(bpath, "c*")))
            for case in block.cases:
                self.refs(case.refs, visible, head)
            for index, case in enumerate(block.cases):
                text = "case _" if case.condition is None else f"case {_label(expr_text(case.condition))}"
                inner = self.block(case.body, visible, _join(bpath, f"c{index}"), text, kind="case")
                cluster.children.append(inner)
                self.edges.append(Edge(head, inner.id, to_cluster=True))
        elif block.kind == "script":
            cluster.nodes.append(Node(_nid(_join(bpath, "script")), "script", "script", _join(bpath, "script")))
        else:
            self.steps(block, dict(visible), cluster, bpath)
        if cluster.first_node() is None:
            cluster.nodes.append(Node(_nid(_join(bpath, "empty")), "(empty)", "note"))
        return cluster

    def steps(self, block: Block, visible: dict[str, str], cluster: Cluster, path: str) -> list[str]:
        """Nodes of the block's steps and yields; returns the nodes that read no step of this block."""
        local = {step.name for step in block.steps}
        roots: list[str] = []
        for step in block.steps:
            spath = _join(path, step.name)
            node = _nid(spath)
            decl = self.program.facets.get(step.call.facet or "") if self.program else None
            kind = self.step_kind(step, decl)
            cluster.nodes.append(Node(node, f"{step.name} = {step.call.facet or step.call.name}", kind, spath))
            self.refs(step.refs, visible, node)
            if not any(ref in local for ref in step.refs):
                roots.append(node)
            visible[step.name] = node
            self.tails(step, decl, dict(visible), cluster, node, spath)
        for index, item in enumerate(block.yields):
            node = _nid(_join(path, f"yield {index}"))
            fields = ", ".join(arg.name for arg in item.args)
            cluster.nodes.append(Node(node, _label(f"yield {item.target or item.name}({fields})"), "yield",
                                      _join(path, f"yield {item.name}")))
            self.refs(item.refs, visible, node)
            if not any(ref in local for ref in item.refs):
                roots.append(node)
        return roots

    @staticmethod
    def step_kind(step: Step, decl: FacetDecl | None) -> str:
        if step.call.kind == "schema":
            return "record"
        if step.call.kind in ("event", "builtin") or (decl is not None and (decl.kind == "event" or decl.prompt is not None)):
            return "event"
        if decl is not None and (decl.blocks or decl.script is not None):
            return "composed"
        return "record"

    def tails(self, step: Step, decl: FacetDecl | None, visible: dict[str, str], cluster: Cluster, node: str,
              spath: str) -> None:
        """What runs inside a step: its own andThen blocks (or else its facet's body), then a catch."""
        self.blocks(step.blocks, visible, cluster, spath, node)
        if not step.blocks and decl is not None and self.expand and decl.blocks:
            self.body(decl, cluster, node, spath)
        if step.catch is not None:
            self.catch(step.catch.block, visible, cluster, node, spath)
        elif decl is not None and decl.catch is not None and self.expand:
            self.catch(decl.catch.block, {}, cluster, node, spath)  # a facet's catch runs at its caller

    def body(self, decl: FacetDecl, cluster: Cluster, node: str, spath: str) -> None:
        """A composed facet's body, inlined at the calling step as the interpreter runs it."""
        if decl.qname in self.stack or len(self.stack) >= MAX_EXPANSION:
            return
        self.stack.append(decl.qname)
        body = Cluster(_nid(spath) + "_body", f"{decl.qname} body", "body")
        self.blocks(decl.blocks, {}, body, spath, None)
        self.stack.pop()
        cluster.children.append(body)
        self.edges.append(Edge(node, body.id, to_cluster=True))

    def catch(self, block: Block, visible: dict[str, str], cluster: Cluster, node: str | None, spath: str) -> None:
        title = "catch when" if block.kind == "when" else "catch"
        inner = self.block(block, visible, _join(spath, "catch"), title, kind="catch")
        cluster.children.append(inner)
        if node is not None:
            self.edges.append(Edge(node, inner.id, "on error", to_cluster=True, dotted=True))

    def refs(self, refs: list[str], visible: dict[str, str], node: str) -> None:
        for name in dict.fromkeys(refs):
            source = visible.get(name)
            if source is not None and source != node:
                self.edges.append(Edge(source, node))


def build_graph(decl: FacetDecl, program: Program | None = None, *, expand: bool = True) -> Graph:
    """The drawing of ``decl``; with ``program``, composed facets' bodies are drawn inside their steps."""
    root = Cluster(_nid(decl.qname), decl.qname, "workflow")
    builder = _Builder(program, expand)
    builder.blocks(decl.blocks, {}, root, "", None)
    if decl.catch is not None:
        builder.catch(decl.catch.block, {}, root, None, "")
    if root.first_node() is None:
        root.nodes.append(Node(_nid(f"{decl.qname}/empty"), "(no steps)", "note"))
    return Graph(root, builder.edges)


# --------------------------------------------------------------------------- run states


def pattern_of(path: str) -> str:
    """A step's runtime path with foreach indices generalised: ``b0/foreach[3]/g`` → ``b0/foreach[*]/g``."""
    return _ITERATION.sub("foreach[*]", path)


def _worst(found: Counter) -> str | None:
    for state in STATE_ORDER:
        if found.get(state):
            return state
    return None


def _note(found: Counter) -> str:
    return " ".join(f"{MARKS[state]}{found[state]}" for state in STATE_ORDER if found.get(state))


def apply_states(graph: Graph, states: Mapping[str, str], *, closed: bool) -> Graph:
    """Colour ``graph`` by a run: ``states`` maps each step's runtime path to its display state.

    Nodes standing for many records (steps inside a foreach) show the counts
    of each state; a foreach header shows its iterations; a node no record
    reached is ``waiting`` in a running run and ``skipped`` in a closed one.
    """
    by_pattern: dict[str, Counter] = {}
    iterations: dict[str, set[str]] = {}
    for path, state in states.items():
        by_pattern.setdefault(pattern_of(path), Counter())[state] += 1
        for match in _ITERATION.finditer(path):
            head = pattern_of(path[: match.start()]) + "foreach"
            iterations.setdefault(head, set()).add(path[: match.end()])
    for node in graph.nodes():
        if node.pattern is None or node.kind in ("yield", "script", "note"):
            continue
        if node.kind in ("foreach", "when"):
            prefix = node.pattern + "[*]/" if node.kind == "foreach" else node.pattern[: -len("c*")]
            found = Counter()
            for pattern, counter in by_pattern.items():
                if pattern.startswith(prefix) and (node.kind == "foreach" or re.match(r"c\d+/", pattern[len(prefix):])):
                    found.update(counter)
            node.state = _worst(found) or ("skipped" if closed else "waiting")
            if node.kind == "foreach":
                count = len(iterations.get(node.pattern, ()))
                node.note = f"{count} iteration{'s' if count != 1 else ''}" + (f": {_note(found)}" if found else "")
            continue
        found = by_pattern.get(node.pattern, Counter())
        node.state = _worst(found) or ("skipped" if closed else "waiting")
        if "[*]" in node.pattern and found:
            node.note = _note(found)
    return graph


# --------------------------------------------------------------------------- output


def _text(node: Node, separator: str) -> str:
    text = _label(node.label, 200)
    return text + (separator + _label(node.note, 120) if node.note else "")


def to_mermaid(graph: Graph) -> str:
    lines = ["flowchart TD"]
    styles: list[str] = []

    def emit(cluster: Cluster, depth: int) -> None:
        pad = "    " * depth
        for node in cluster.nodes:
            opening, closing = _MERMAID_SHAPES[node.kind]
            lines.append(f"{pad}{node.id}{opening}{_text(node, '<br/>')}{closing}")
        for child in cluster.children:
            lines.append(f'{pad}subgraph {child.id}["{_label(child.label, 200)}"]')
            emit(child, depth + 1)
            lines.append(f"{pad}end")
            styles.append(f"style {child.id} {_CLUSTER_STYLE[child.kind][0]}")

    lines.append(f'subgraph {graph.root.id}["{graph.root.label}"]')
    emit(graph.root, 1)
    lines.append("end")
    for edge in graph.edges:
        arrow = "-.->" if edge.dotted else "-->"
        label = f"|{edge.label}|" if edge.label else ""
        lines.append(f"{edge.source} {arrow}{label} {edge.target}")
    lines.extend(styles)
    states: dict[str, list[str]] = {}
    for node in graph.nodes():
        if node.state:
            states.setdefault(node.state, []).append(node.id)
    for state in STATE_ORDER:
        if state in states:
            fill, stroke = STATE_COLOURS[state]
            lines.append(f"classDef {state} fill:{fill},stroke:{stroke},stroke-width:2px")
            lines.append(f"class {','.join(states[state])} {state}")
    return "\n".join(lines) + "\n"


def to_dot(graph: Graph) -> str:
    lines = ["digraph workflow {", "    compound=true;", '    node [shape=box, fontname="Helvetica"];',
             '    fontname="Helvetica";']

    def emit(cluster: Cluster, depth: int) -> None:
        pad = "    " * depth
        for node in cluster.nodes:
            attrs = [f'label="{_text(node, chr(92) + "n")}"', _DOT_SHAPES[node.kind]]
            if node.state:
                fill, stroke = STATE_COLOURS[node.state]
                style = 'style="rounded,filled"' if node.kind == "event" else "style=filled"
                attrs = [a for a in attrs if "style=" not in a] if node.kind == "event" else attrs
                attrs += [style, f'fillcolor="{fill}"', f'color="{stroke}"']
            lines.append(f"{pad}{node.id} [{', '.join(attrs)}];")
        for child in cluster.children:
            lines.append(f"{pad}subgraph cluster_{child.id} {{")
            style = _CLUSTER_STYLE[child.kind][1].replace(", ", "; ")
            lines.append(f'{pad}    label="{_label(child.label, 200)}"; {style};')
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


def _find(cluster: Cluster, cid: str) -> Cluster | None:
    if cluster.id == cid:
        return cluster
    for child in cluster.children:
        found = _find(child, cid)
        if found:
            return found
    return None


def draw(graph: Graph, fmt: str) -> str:
    if fmt == "dot":
        return to_dot(graph)
    if fmt == "mermaid":
        return to_mermaid(graph)
    raise GraphError(f"unknown graph format '{fmt}' (use mermaid or dot)")


def render(program: Program, workflow: str, fmt: str = "mermaid", *, expand: bool = True) -> str:
    """The drawing of ``workflow`` in ``fmt`` (``mermaid`` or ``dot``)."""
    return draw(build_graph(find_workflow(program, workflow), program, expand=expand), fmt)
