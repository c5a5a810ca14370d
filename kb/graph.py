"""The link graph, built from the store and exported as Graphviz dot, JSON or Mermaid."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from kb.text import clean_line, json_text, one_line

if TYPE_CHECKING:
    from kb.connections import Mention, Related
    from kb.store import Store


_INFERRED = ("mention", "related")  # edges kb infers, not links: drawn dashed


@dataclass(frozen=True, slots=True)
class GraphNode:
    id: int
    path: str
    title: str


@dataclass(frozen=True, slots=True)
class GraphEdge:
    source: int
    target: int
    kind: str  # link, a typed-link key (uses, lecture, ...), mention or related


@dataclass(slots=True)
class Graph:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)


def link_graph(
    store: Store,
    mentions: Callable[[int], Iterable[Mention]] | None = None,
    related: Callable[[int], Iterable[Related]] | None = None,
) -> Graph:
    """Every note and link; with ``mentions`` and ``related`` (a note id -> those of that
    note), an edge for each unlinked mention and related note too."""
    graph = Graph(
        [GraphNode(row.id, row.path, clean_line(row.title)) for row in store.notes.listing()]
    )
    by_path = {node.path: node.id for node in graph.nodes}
    graph.edges = [
        GraphEdge(row.source_id, row.target_id, row.rel or "link")
        for row in store.links.graph_edges()
    ]
    for node in graph.nodes:
        if mentions is not None:
            graph.edges += [
                GraphEdge(by_path[m.path], node.id, "mention") for m in mentions(node.id)
            ]
        if related is not None:
            graph.edges += [
                GraphEdge(node.id, by_path[r.path], "related") for r in related(node.id)
            ]
    return graph


def render(graph: Graph, fmt: str) -> str:
    if fmt == "json":
        return to_json(graph)
    if fmt == "mermaid":
        return to_mermaid(graph)
    return to_dot(graph)


def to_json(graph: Graph) -> str:
    return json_text(
        {"nodes": [asdict(n) for n in graph.nodes], "edges": [asdict(e) for e in graph.edges]},
        indent=1,
    )


def _dot_string(text: str) -> str:
    # One line, terminal-safe: Graphviz output is often read on a terminal.
    return '"' + one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(graph: Graph) -> str:
    lines = ["digraph kb {", "  node [shape=box];"]
    for node in graph.nodes:
        lines.append(
            f"  n{node.id} [label={_dot_string(node.title)}, tooltip={_dot_string(node.path)}];"
        )
    for edge in graph.edges:
        style = "" if edge.kind == "link" else f" [label={_dot_string(edge.kind)}"
        if edge.kind in _INFERRED:
            style += ", style=dashed"
        lines.append(f"  n{edge.source} -> n{edge.target}{style + ']' if style else ''};")
    lines.append("}")
    return "\n".join(lines)


def _mermaid_label(text: str) -> str:
    # Mermaid has no escape for quotes inside ["..."]; its HTML entity form is accepted.
    return one_line(text).replace('"', "#quot;")


def to_mermaid(graph: Graph) -> str:
    lines = ["graph LR"]
    for node in graph.nodes:
        lines.append(f'  n{node.id}["{_mermaid_label(node.title)}"]')
    for edge in graph.edges:
        arrow = "-.->" if edge.kind in _INFERRED else "-->"
        label = "" if edge.kind == "link" else f"|{_mermaid_label(edge.kind)}|"
        lines.append(f"  n{edge.source} {arrow}{label} n{edge.target}")
    return "\n".join(lines)
