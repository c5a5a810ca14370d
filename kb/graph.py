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
    """Every note and one edge per linked pair and direction (a typed link's keys name it,
    else ``link``); with ``mentions`` and ``related`` (a note id -> those of that note), a
    ``mention`` edge for each unlinked mention and one ``related`` edge per related pair,
    left out where a link or an earlier edge already joins the two notes."""
    graph = Graph(
        [GraphNode(row.id, row.path, clean_line(row.title)) for row in store.notes.listing()]
    )
    by_path = {node.path: node.id for node in graph.nodes}
    rels: dict[tuple[int, int], set[str]] = {}
    for row in store.links.graph_edges():
        rels.setdefault((row.source_id, row.target_id), set()).update([row.rel] if row.rel else [])
    graph.edges = [
        GraphEdge(source, target, ", ".join(sorted(keys)) or "link")
        for (source, target), keys in rels.items()
    ]
    joined = {frozenset(pair) for pair in rels}
    for node in graph.nodes:
        if mentions is not None:
            for mention in mentions(node.id):
                pair = frozenset((by_path[mention.path], node.id))
                if pair not in joined:
                    joined.add(pair)
                    graph.edges.append(GraphEdge(by_path[mention.path], node.id, "mention"))
        if related is not None:
            for other in related(node.id):
                pair = frozenset((node.id, by_path[other.path]))
                if pair not in joined:
                    joined.add(pair)
                    graph.edges.append(GraphEdge(node.id, by_path[other.path], "related"))
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
