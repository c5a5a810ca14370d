"""Search as the user sees it: parse the query, ask the engine, build hits with snippets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kb.engines import SearchEngine
from kb.query import Phrase, Query, Word, parse_query
from kb.snippets import highlight_spans, make_snippet, term_patterns
from kb.store import Store
from kb.text import clean_line, json_text

DEFAULT_LIMIT = 20


class SearchHit(NamedTuple):
    note_id: int
    path: str  # relative to the notes root (prefixed with the root's name if several)
    root: str
    rel: str
    title: str
    date: str | None
    tags: list[str]
    snippet: str
    highlights: list[tuple[int, int]]  # spans in snippet
    title_highlights: list[tuple[int, int]]
    score: float

    def as_json(self) -> dict[str, object]:
        data = self._asdict()
        data["highlights"] = [list(span) for span in self.highlights]
        data["title_highlights"] = [list(span) for span in self.title_highlights]
        data["score"] = round(self.score, 4)
        del data["root"], data["rel"]
        return data


@dataclass(slots=True)
class SearchResults:
    query: Query
    hits: list[SearchHit] = field(default_factory=list)
    suggestion: str | None = None
    warning: str | None = None

    def to_json(self) -> str:
        # json_text: exact values, with C1 and bidi controls escaped as \u sequences.
        return json_text([hit.as_json() for hit in self.hits], indent=2)


def run_search(
    store: Store,
    engine: SearchEngine,
    text: str,
    limit: int = DEFAULT_LIMIT,
    prefix_last: bool = False,
) -> SearchResults:
    """Search ``text`` (kb's query language). Raises QuerySyntaxError on bad syntax."""
    query = parse_query(text, prefix_last=prefix_last)
    results = SearchResults(query)
    if not engine.is_ready():
        results.warning = "the search index is missing or behind the notes: run 'kb ingest'"
    engine_hits = engine.search(query, limit)
    patterns = term_patterns(query.positive_terms())
    for engine_hit in engine_hits:
        row = store.notes.by_id(engine_hit.note_id)
        if row is None:
            continue
        title = clean_line(row.title)
        snippet, spans = make_snippet(row.text or row.summary or "", patterns)
        results.hits.append(
            SearchHit(
                note_id=row.id,
                path=row.path,
                root=row.root,
                rel=row.rel,
                title=title,
                date=row.date,
                tags=[clean_line(t) for t in store.terms.of_note("tags", row.id)],
                snippet=snippet,
                highlights=spans,
                title_highlights=highlight_spans(title, patterns),
                score=engine_hit.score,
            )
        )
    if not results.hits:
        results.suggestion = _suggest(engine, query)
    return results


def _suggest(engine: SearchEngine, query: Query) -> str | None:
    """Replace each misspelt Latin word by its closest indexed word, if any changed."""
    changed = False
    words = []
    for term in query.positive_terms():
        if isinstance(term, Word) and not term.prefix and term.text.isascii():
            near = engine.vocabulary_near(term.text, 1)
            if near and near[0] != term.text.lower():
                words.append(near[0])
                changed = True
                continue
        words.append(f'"{term.text}"' if isinstance(term, Phrase) else getattr(term, "text", ""))
    return " ".join(w for w in words if w) if changed else None
