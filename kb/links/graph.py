"""The link graph, built from the store and exported as Graphviz dot, JSON or Mermaid."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from kb.text import clean_line, json_text, one_line

if TYPE_CHECKING:
    from kb.links.connections import Mention, Related
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


@dataclass(frozen=True, slots=True)
class Graph:
    """Every note, and the edges between them. ``edges`` is read from the store again on
    each pass and never held whole: a million links cost the memory of one."""

    nodes: list[GraphNode] = field(default_factory=list)
    edges: Iterable[GraphEdge] = ()


class _Edges:
    """An iterable that runs ``make`` on each pass (a generator runs only once)."""

    def __init__(self, make: Callable[[], Iterator[GraphEdge]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[GraphEdge]:
        return self._make()


def link_graph(
    store: Store,
    mentions: Callable[[int], Iterable[Mention]] | None = None,
    related: Callable[[int], Iterable[Related]] | None = None,
) -> Graph:
    """Every note and one edge per linked pair and direction (a typed link's keys name it,
    else ``link``); with ``mentions`` and ``related`` (a note id -> those of that note), a
    ``mention`` edge for each unlinked mention and one ``related`` edge per related pair,
    left out where a link or an earlier edge already joins the two notes."""
    nodes = [GraphNode(row.id, row.path, clean_line(row.title)) for row in store.notes.listing()]

    def edges() -> Iterator[GraphEdge]:
        inferred = mentions is not None or related is not None
        joined: set[int] = set()  # the pairs joined so far, only when inferred edges follow
        for edge in _link_edges(store):
            if inferred:
                joined.add(_pair(edge.source, edge.target))
            yield edge
        if not inferred:
            return
        by_path = {node.path: node.id for node in nodes}
        for node in nodes:
            candidates = [
                *((by_path[m.path], node.id, "mention") for m in (mentions or _none)(node.id)),
                *((node.id, by_path[r.path], "related") for r in (related or _none)(node.id)),
            ]
            for source, target, kind in candidates:
                pair = _pair(source, target)
                if pair not in joined:
                    joined.add(pair)
                    yield GraphEdge(source, target, kind)

    return Graph(nodes, _Edges(edges))


def _none(note_id: int) -> tuple[()]:
    return ()


def _link_edges(store: Store) -> Iterator[GraphEdge]:
    """One edge per linked pair and direction, in the store's order (by source, then
    target, so a pair's rows come together): named by its typed links' keys, else link."""
    pair: tuple[int, int] | None = None
    keys: set[str] = set()
    for row in store.links.each_graph_edge():
        if (row.source_id, row.target_id) != pair:
            if pair is not None:
                yield GraphEdge(*pair, ", ".join(sorted(keys)) or "link")
            pair, keys = (row.source_id, row.target_id), set()
        if row.rel:
            keys.add(row.rel)
    if pair is not None:
        yield GraphEdge(*pair, ", ".join(sorted(keys)) or "link")


def _pair(a: int, b: int) -> int:
    """Two note ids, either way round, as one int: a set of a million costs 73 MB where
    frozensets cost 310."""
    low, high = (a, b) if a <= b else (b, a)
    return low << 64 | high


# Output goes out in pieces of about this many characters: one write per line would cost
# more than making the line.
_CHUNK_CHARS = 1 << 16


def render(graph: Graph, fmt: str) -> Iterator[str]:
    """The graph as text in ``fmt`` (dot, json or mermaid), in pieces to write one after
    another; together they end with a line break."""
    lines = _json_lines if fmt == "json" else _mermaid_lines if fmt == "mermaid" else _dot_lines
    return _chunks(lines(graph))


def _chunks(lines: Iterable[str]) -> Iterator[str]:
    buffer: list[str] = []
    size = 0
    for line in lines:
        buffer.append(line)
        size += len(line) + 1
        if size >= _CHUNK_CHARS:
            yield "\n".join(buffer) + "\n"
            buffer, size = [], 0
    if buffer:
        yield "\n".join(buffer) + "\n"


def _json_lines(graph: Graph) -> Iterator[str]:
    """What ``json_text({"nodes": [...], "edges": [...]}, indent=1)`` prints, line by line,
    one node or edge at a time."""
    yield "{"
    yield from _json_list("nodes", (json_text(asdict(node), indent=1) for node in graph.nodes))
    kinds: dict[str, str] = {}  # few: link, mention, related, the typed-link keys

    def edge_text(edge: GraphEdge) -> str:
        kind = kinds.get(edge.kind)
        if kind is None:
            kind = kinds[edge.kind] = json_text(edge.kind)
        return f'{{\n "source": {edge.source},\n "target": {edge.target},\n "kind": {kind}\n}}'

    yield from _json_list("edges", map(edge_text, graph.edges), last=True)
    yield "}"


def _json_list(key: str, items: Iterable[str], last: bool = False) -> Iterator[str]:
    """A key of the top object and its list of objects (each written as at the top), laid
    out as ``json.dumps(indent=1)`` lays them at their depth."""
    after = "" if last else ","
    objects = iter(items)
    previous = next(objects, None)
    if previous is None:
        yield f' "{key}": []{after}'
        return
    yield f' "{key}": ['
    for item in objects:
        yield _indented(previous) + ","
        previous = item
    yield _indented(previous)
    yield f" ]{after}"


def _indented(text: str) -> str:
    return "  " + text.replace("\n", "\n  ")


def _dot_string(text: str) -> str:
    # One line, terminal-safe: Graphviz output is often read on a terminal.
    return '"' + one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot_lines(graph: Graph) -> Iterator[str]:
    yield "digraph kb {"
    yield "  node [shape=box];"
    for node in graph.nodes:
        yield f"  n{node.id} [label={_dot_string(node.title)}, tooltip={_dot_string(node.path)}];"
    for edge in graph.edges:
        style = "" if edge.kind == "link" else f" [label={_dot_string(edge.kind)}"
        if edge.kind in _INFERRED:
            style += ", style=dashed"
        yield f"  n{edge.source} -> n{edge.target}{style + ']' if style else ''};"
    yield "}"


def _mermaid_label(text: str) -> str:
    # Mermaid has no escape for quotes inside ["..."]; its HTML entity form is accepted.
    return one_line(text).replace('"', "#quot;")


def _mermaid_lines(graph: Graph) -> Iterator[str]:
    yield "graph LR"
    for node in graph.nodes:
        yield f'  n{node.id}["{_mermaid_label(node.title)}"]'
    for edge in graph.edges:
        arrow = "-.->" if edge.kind in _INFERRED else "-->"
        label = "" if edge.kind == "link" else f"|{_mermaid_label(edge.kind)}|"
        yield f"  n{edge.source} {arrow}{label} n{edge.target}"
