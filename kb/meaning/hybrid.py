"""When meaning joins the ranking, and how. Importing this module is cheap: numpy and the
model load only when a query's words are weak and the store holds vectors.

Meaning joins where the words are weak: the query reads as a question or a sentence, no
note holds every word, fewer notes hold every word than the page shows, or a word is
held only through a glossary partner (the notes are in the other language). It never
joins for a query whose words decide by construction: a phrase, a filter, OR/NOT, a
prefix, an identifier, or a typo that was corrected. Then the order is the words' alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from threading import Lock
from typing import TYPE_CHECKING, Any

from kb.meaning.embedder import Choice, Embedder, EmbedderError, configured, load_embedder

if TYPE_CHECKING:
    from kb.query.reading import Reading
    from kb.store import Store

Ranked = tuple[int, float, list[str], list[str]]  # (note, score, words held, words missing)

NOTES = 30  # nearest notes asked for
RRF_K = 10  # reciprocal-rank constant: ranks this far apart weigh alike
MEANING_WEIGHT = 1.0  # meaning's weight against the words' (1.0) where the words are weak
UNHELD_SHARE = 0.5  # meaning's weight for a non-question with a word no note holds
MIN_SIMILARITY = 0.30  # a passage less near than this is not shown as found by meaning
WITHIN_BEST = 0.20  # ... nor one this much less near than the nearest
_QUESTION = re.compile(
    r"[?？]|^(how|what|why|when|where|which|who|whom|whose|is|are|does|do|can|could|"
    r"should|would|will)\b|什么|怎么|怎样|如何|为什么|为何|哪|吗|呢|是否|能否|多少|几",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(r"[_./:#@\\]|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")
SENTENCE_WORDS = 5  # this many words read as a sentence
QUERIES = 256  # query vectors kept (2 KB each)


@dataclass(frozen=True, slots=True)
class Found:
    """A hit the meaning found: its nearest passage."""

    similarity: float
    heading: str
    passage: str


class Meaning:
    """The embedder kb.yaml chose, loaded on first use and kept (the app, the servers)."""

    _loaded: dict[str, Embedder] = {}  # noqa: RUF012 (one per process, by choice)
    _queries: dict[tuple[str, str], tuple[Embedder, Any]] = {}  # noqa: RUF012 (a query's vector)
    _lock = Lock()

    def __init__(self, choice: Choice) -> None:
        self.choice = choice

    def embedder(self) -> Embedder:
        with self._lock:
            embedder = self._loaded.get(self.choice.label)
            if embedder is None:
                embedder = self._loaded[self.choice.label] = load_embedder(self.choice)
        return embedder

    def encode_query(self, text: str) -> Any:
        """The query's vector, kept for the last QUERIES texts: the app asks the same
        question again as the notes change, a face pages through one (7-14 ms each)."""
        embedder = self.embedder()
        key = (self.choice.label, text)
        with self._lock:
            cached = self._queries.get(key)
        if cached is not None and cached[0] is embedder:
            return cached[1]
        vector = embedder.encode_query(text)
        with self._lock:
            if len(self._queries) >= QUERIES:
                self._queries.pop(next(iter(self._queries)))  # the oldest
            self._queries[key] = (embedder, vector)
        return vector


def configured_meaning(settings: dict[str, Any]) -> Meaning | None:
    """kb.yaml's ``semantic:`` as a Meaning, or None: off, or its package not installed
    (a wrong setting too: kb ingest says what is wrong; a search keeps the words)."""

    try:
        choice = configured(settings)
    except EmbedderError:
        return None
    return None if choice is None else Meaning(choice)


def is_question(text: str) -> bool:
    words = text.split()
    return bool(_QUESTION.search(text.strip())) or len(words) >= SENTENCE_WORDS


def words_decide(reading: Reading, question: bool = False) -> bool:
    """A query meaning must not touch: syntax, a corrected typo (unless the query is a
    question: a sentence's odd word is more likely a mis-correction), an identifier."""
    if not reading.relaxable or not reading.words:
        return True
    if not question and any(word.instead for word in reading.words):
        return True
    return any(_IDENTIFIER.search(word.word.text) for word in reading.words)


def weak_words(
    text: str, reading: Reading, order: Sequence[Ranked], strict: int, page: int
) -> str | None:
    """Why the words are weak for this query (None: they decide).

    ``question``, ``unheld`` (a word no note holds as typed: only a partner, or nothing)
    let meaning join the ranking fully; ``few`` (fewer notes hold every word than the
    page shows, or none does though each word has holders) keeps the words' order and
    lets meaning add what it finds after it."""
    question = is_question(text)
    if words_decide(reading, question):
        return None
    if question:
        return "question"
    labels = [r.shown_as or r.word.text for r in reading.words]
    held = {label for item in order for label in item[2]}
    if any(label not in held for label in labels):
        return "unheld"
    if strict < page:
        return "few"
    return None


def blend(
    meaning: Meaning,
    store: Store,
    text: str,
    reading: Reading,
    order: Sequence[Ranked],
    strict: int,
    page: int,
) -> tuple[list[Ranked], dict[int, Found], int, bool]:
    """The ranking with meaning joined where the words are weak; the hits found by meaning
    (with their passage); how many notes have no vectors yet; whether meaning joined."""
    why = weak_words(text, reading, order, strict, page)
    if why is None or not store.vectors.exist():
        return list(order), {}, 0, False
    from kb.meaning.index import pending_notes, vector_index  # numpy: only when meaning joins

    embedder = meaning.embedder()
    index = vector_index(store, embedder)
    if index is None:  # vectors of another model: 'kb ingest' re-embeds
        return list(order), {}, store.notes.count(), False
    near = index.nearest(meaning.encode_query(text), NOTES)
    if near:
        # An embedder whose similarities crowd together says how near is near for it.
        least = getattr(embedder, "min_similarity", MIN_SIMILARITY)
        within = getattr(embedder, "within_best", WITHIN_BEST)
        floor = max(least, near[0].similarity - within)
        near = [n for n in near if n.similarity >= floor]
    lexical = {item[0]: rank for rank, item in enumerate(order)}
    by_meaning = {n.note_id: rank for rank, n in enumerate(near)}
    title_key = reading.query.text.strip().casefold()
    pinned = set()
    # A title that is the query: found by the words, never outranked.
    if order:
        first = store.notes.titles_and_sizes([order[0][0]]).get(order[0][0])
        if first and first[0].casefold() == title_key:
            pinned.add(order[0][0])
    # Where every word has holders, the words' order stands: meaning adds after it.
    kept = lexical if why == "few" else {}
    # A few words with one unheld: the words that are held still say much (measured:
    # full weight lost 0.03 MRR on other-language terms, half weight none).
    weight = MEANING_WEIGHT if why == "question" else MEANING_WEIGHT * UNHELD_SHARE

    def fused(note_id: int) -> tuple[bool, bool, float]:
        if note_id in kept:
            return (note_id not in pinned, False, float(kept[note_id]))
        score = 0.0
        if note_id in lexical:
            score += 1.0 / (RRF_K + lexical[note_id])
        if note_id in by_meaning:
            score += weight / (RRF_K + by_meaning[note_id])
        return (note_id not in pinned, True, -score)

    items: dict[int, Ranked] = {item[0]: item for item in order}
    by_note = {n.note_id: n for n in near if n.note_id not in items}
    for n in by_note.values():
        items[n.note_id] = (n.note_id, n.similarity, [], [])
    ranked = sorted(items, key=fused)
    found: dict[int, Found] = {}
    for note_id in ranked[:page]:  # the passage read back only for a hit on the page
        hit = by_note.get(note_id)
        if hit is None:
            continue
        stored = store.vectors.passage(hit.note_id, hit.position)
        row = store.notes.by_id(hit.note_id)
        if stored and row:
            from kb.meaning.passages import passage_text  # deferred: on first use

            shown = passage_text(row.text, stored.start, stored.end) or row.title
            found[hit.note_id] = Found(hit.similarity, stored.heading, shown)
    return [items[i] for i in ranked], found, pending_notes(store), True
