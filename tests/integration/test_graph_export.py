"""`kb graph` streams: each format writes its text piece by piece while the edges are
still being read (never a list of them, nor the whole text), and the text is what it
always was, byte for byte."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import asdict

import pytest

import kb.links.graph
from kb.links.graph import Graph, GraphEdge, GraphNode, render
from kb.text import json_text
from tests.conftest import run_cli as run

FORMATS = ["dot", "json", "mermaid"]

NODES = [
    GraphNode(1, "a.md", 'He said "hi" \\ back'),
    GraphNode(2, "中文/笔记.md", "中文 “标题” 🎉"),
    GraphNode(3, "c.md", "bidi \u202e and DEL \x7f"),
]
EDGES = [
    GraphEdge(1, 2, "link"),
    GraphEdge(2, 1, "uses, lecture"),
    GraphEdge(1, 3, "mention"),
    GraphEdge(3, 2, "related"),
]
GRAPHS = {
    "empty": Graph(),
    "nodes only": Graph(NODES),
    "one edge": Graph(NODES, EDGES[:1]),
    "every kind": Graph(NODES, EDGES),
}


def whole(graph: Graph, fmt: str) -> str:
    return "".join(render(graph, fmt))


@pytest.mark.parametrize("name", list(GRAPHS))
def test_the_json_is_what_json_text_made_of_the_whole_graph(name: str) -> None:
    """The layout kb printed before it streamed: one json_text of the whole graph."""
    graph = GRAPHS[name]
    before = json_text(
        {"nodes": [asdict(n) for n in graph.nodes], "edges": [asdict(e) for e in graph.edges]},
        indent=1,
    )
    assert whole(graph, "json") == before + "\n"
    assert json.loads(whole(graph, "json"))["nodes"] == [asdict(n) for n in graph.nodes]


def test_dot_and_mermaid_text() -> None:
    graph = GRAPHS["every kind"]
    assert whole(graph, "dot") == (
        "digraph kb {\n"
        "  node [shape=box];\n"
        '  n1 [label="He said \\"hi\\" \\\\ back", tooltip="a.md"];\n'
        '  n2 [label="中文 “标题” 🎉", tooltip="中文/笔记.md"];\n'
        '  n3 [label="bidi <U+202E> and DEL", tooltip="c.md"];\n'
        "  n1 -> n2;\n"
        '  n2 -> n1 [label="uses, lecture"];\n'
        '  n1 -> n3 [label="mention", style=dashed];\n'
        '  n3 -> n2 [label="related", style=dashed];\n'
        "}\n"
    )
    assert whole(graph, "mermaid") == (
        "graph LR\n"
        '  n1["He said #quot;hi#quot; \\ back"]\n'
        '  n2["中文 “标题” 🎉"]\n'
        '  n3["bidi <U+202E> and DEL"]\n'
        "  n1 --> n2\n"
        "  n2 -->|uses, lecture| n1\n"
        "  n1 -.->|mention| n3\n"
        "  n3 -.->|related| n2\n"
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_pieces_join_to_the_same_text_wherever_they_are_cut(monkeypatch, fmt) -> None:
    graph = Graph(NODES, [GraphEdge(i % 3 + 1, (i + 1) % 3 + 1, "link") for i in range(500)])
    in_one = whole(graph, fmt)
    monkeypatch.setattr(kb.links.graph, "_CHUNK_CHARS", 7)
    pieces = list(render(graph, fmt))
    assert len(pieces) > 100
    assert "".join(pieces) == in_one


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_writes_while_the_edges_are_still_being_read(fmt: str) -> None:
    """The first piece comes out after a few edges of a million: none is kept for later."""
    pulled = 0

    def edges() -> Iterator[GraphEdge]:
        nonlocal pulled
        for i in itertools.count():
            pulled += 1
            yield GraphEdge(1, 2, "link" if i % 2 else "uses")

    class Once:
        def __iter__(self) -> Iterator[GraphEdge]:
            return itertools.islice(edges(), 1_000_000)

    pieces = render(Graph(NODES, Once()), fmt)
    first = next(pieces)
    assert first.startswith(("digraph", "{", "graph LR"))
    assert 0 < pulled < 10_000
    second = next(pieces)
    assert pulled < 20_000 and len(first) + len(second) < 300_000


LINKING = {
    "a.md": "---\nuses: [b.md]\n---\n# A\n\n[b](b.md) [b again](b.md) [c](c.md) [self](a.md)\n",
    "b.md": "# B\n\n[a](a.md) and Cassandra, unlinked\n",
    "c.md": "# Cassandra\n\n[[a]] [[missing]]\n",
}


def test_the_store_graph_can_be_read_twice_and_has_one_edge_per_pair(make_kb) -> None:
    kb = make_kb(LINKING)
    kb.ingest()
    graph = kb.links.graph(with_mentions=True)
    first, again = list(graph.edges), list(graph.edges)
    assert first == again
    paths = {node.id: node.path for node in graph.nodes}
    assert [(paths[e.source], paths[e.target], e.kind) for e in first] == [
        ("a.md", "b.md", "uses"),
        ("a.md", "c.md", "link"),
        ("b.md", "a.md", "link"),
        ("c.md", "a.md", "link"),
        ("b.md", "c.md", "mention"),
    ]


@pytest.mark.parametrize("fmt", FORMATS)
def test_kb_graph_prints_the_whole_text_once(make_kb, fmt: str) -> None:
    kb = make_kb(LINKING)
    kb.ingest()
    result = run(kb, "graph", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stdout == whole(kb.links.graph(), fmt)
    assert result.stdout.endswith(("}\n", "n1\n")) and not result.stdout.endswith("\n\n")
