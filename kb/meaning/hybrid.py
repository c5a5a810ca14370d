"""When meaning joins the ranking, and how. Importing this module is cheap: numpy and the
model load only when a query's words are weak and the store holds vectors.

Meaning joins where the words are weak: the query reads as a question or a sentence, no
note holds every word, fewer notes hold every word than the page shows, or a word is
held only through a glossary partner (the notes are in the other language). It never
joins for a query whose words decide by construction: a phrase, a filter, OR/NOT, a
prefix, an identifier, or a typo that was corrected. Then the order is the words' alone.
Where it joins, one weighted sum of calibrated scores ranks the words' notes and the
model's nearest (kb.meaning.fusion); where the words find nothing, the notes nearer than
the corpus's floor fill the page (kb.meaning.floor).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from threading import Lock
from typing import TYPE_CHECKING, Any

from kb.meaning.embedder import Choice, Embedder, EmbedderError, configured, load_embedder
from kb.meaning.fusion import NEAREST, WEIGHTS, Evidence, ranking

if TYPE_CHECKING:
    from kb.query.reading import Reading
    from kb.store import Store

Ranked = tuple[int, float, list[str], list[str]]  # (note, score, words held, words missing)

NOTES = 30  # nearest notes asked for
MIN_SIMILARITY = 0.30  # the floor until kb ingest has measured the corpus's (kb.meaning.floor)
_QUESTION = re.compile(
    r"[?？]|^(how|what|why|when|where|which|who|whom|whose|is|are|does|do|can|could|"
    r"should|would|will)\b|什么|怎么|怎样|如何|为什么|为何|哪|吗|呢|是否|能否|多少|几"
    # A comparison is a question without its question word: "prefill decode 区别" asks
    # how the two differ, and is answered by a note on both, not by the nearest one.
    r"|区别|差别|差异|异同|对比|\b(vs|versus)\b|\bdifferences? between\b|\bcompared? (to|with)\b",
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


@dataclass(frozen=True, slots=True)
class MeaningStatus:
    """Whether search by meaning is on and how far the embedding is (kb info, kb stats)."""

    on: bool
    model: str | None  # kb.yaml's choice, e.g. use-multilingual
    why_off: str  # '' when on
    vectors: str | None  # the stored vectors' signature (model, version, format)
    notes: int  # notes with vectors
    passages: int
    waiting: int  # notes without vectors of their current version
    floor: float | None  # how near unrelated questions come (kb.meaning.floor)

    def as_json(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}

    def summary(self) -> str:
        if not self.on:
            return f"off ({self.why_off})"
        waiting = f", {self.waiting:,} waiting (kb ingest embeds them)" if self.waiting else ""
        return (
            f"on ({self.model}): {self.notes:,} notes, {self.passages:,} passages embedded{waiting}"
        )


def meaning_status(settings: dict[str, Any], store: Store | None) -> MeaningStatus:
    """Read from kb.yaml and the store's counts: no model, no numpy."""
    try:
        choice = configured(settings)
    except EmbedderError as error:
        return MeaningStatus(False, None, str(error), None, 0, 0, 0, None)
    if choice is None:
        why = (
            "KB_SEMANTIC=off"
            if os.environ.get("KB_SEMANTIC")
            else "semantic: off, or not installed"
        )
        return MeaningStatus(False, None, why, None, 0, 0, 0, None)
    if store is None:
        return MeaningStatus(True, choice.label, "", None, 0, 0, 0, None)
    from kb.meaning.floor import stored_floor  # deferred: only kb info/stats ask

    signature = store.vectors.signature()
    return MeaningStatus(
        True,
        choice.label,
        "",
        signature,
        store.vectors.note_count(),
        store.vectors.count(),
        store.vectors.pending_count(),
        stored_floor(store, signature) if signature else None,
    )


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


@dataclass(frozen=True, slots=True)
class Why:
    """How one hit was ranked (``kb search --explain``): the gate the query took, the
    hit's word score and meaning scores (0..1, kb.meaning.fusion) and raw cosines, and the
    fused score (None where the words decided alone)."""

    gate: str
    word: float
    passage: float
    whole: float
    similarity: float  # the best passage's cosine with the query
    fused: float | None
    heading: str = ""
    passage_text: str = ""


@dataclass(slots=True)
class Blended:
    order: list[Ranked]
    found: dict[int, Found]  # hits found by meaning alone: their passage (≈)
    why: dict[int, Why]  # for every hit on the page, when meaning was asked
    behind: int  # notes without vectors yet
    joined: bool  # meaning changed or filled the page
    gate: str


def gate_of(text: str, reading: Reading, order: Sequence[Ranked], strict: int, page: int) -> str:
    """Which weights rank this query (kb.meaning.fusion.WEIGHTS), or ``words``: the words'
    order stands (syntax, an identifier, a corrected typo; every word held by more notes
    than the page shows, as Meilisearch skips the vectors when the words fill the page).
    ``question``: a question or a sentence; ``keywords``: a few words, one held by no note
    as typed, or fewer notes holding every word than the page shows."""
    question = is_question(text)
    if words_decide(reading, question):
        return "words"
    if question:
        return "question"
    labels = [r.shown_as or r.word.text for r in reading.words]
    held = {label for item in order for label in item[2]}
    if any(label not in held for label in labels) or strict < page:
        return "keywords"
    return "words"


def blend(
    meaning: Meaning,
    store: Store,
    text: str,
    reading: Reading,
    order: Sequence[Ranked],
    strict: int,
    page: int,
    explain: bool = False,
) -> Blended:
    """The words' order with meaning fused in by the query's gate, or, when the words
    found nothing, the notes the model finds nearer than the corpus's floor (marked ≈).
    Where the words decide numpy is not even loaded (unless ``explain`` asks what
    meaning would have said)."""
    gate = gate_of(text, reading, order, strict, page)
    words_only = Blended(list(order), {}, {}, 0, False, gate)
    # The words decide (syntax, an identifier, a corrected typo): their page, even empty.
    if gate == "words" and not explain:
        return words_only
    if not store.vectors.exist():
        return words_only
    from kb.meaning.index import note_evidence, pending_notes, vector_index  # numpy

    embedder = meaning.embedder()
    index = vector_index(store, embedder)
    if index is None:  # vectors of another model: 'kb ingest' re-embeds
        words_only.behind = store.notes.count()
        return words_only
    floor = _floor(store, embedder)
    query = meaning.encode_query(text)
    near = note_evidence(index, query, [item[0] for item in order], 2 * NEAREST)
    scores = {
        int(note): (float(p), float(w), int(at))
        for note, p, w, at in zip(
            near.note_ids, near.passage, near.whole, near.position, strict=True
        )
    }
    items: dict[int, Ranked] = {item[0]: item for item in order}
    pinned = _pinned(store, reading, order)
    # A phrase or a filter, or a title typed exactly: the words decide.
    fused_gate = gate if reading.relaxable and pinned is None else "words"
    fill = fused_gate != "words"
    held = [len(item[2]) / max(len(item[2]) + len(item[3]), 1) for item in order]
    ranked = ranking(list(items), scores, fused_gate, floor, pinned=pinned, fill=fill, held=held)
    joined = (not order and bool(ranked)) or (bool(order) and fused_gate in WEIGHTS)
    for e, _ in ranked:
        if e.note_id not in items:
            items[e.note_id] = (e.note_id, e.passage, [], [])
    found: dict[int, Found] = {}
    why: dict[int, Why] = {}
    for e, fused in ranked[:page]:  # passages read back only for hits on the page
        shown = _passage(store, e) if (explain or e.word_rank is None) else None
        if e.word_rank is None and shown is not None:
            found[e.note_id] = Found(e.passage, shown[0], shown[1])
        if explain:
            word, passage, whole = e.scores(floor)
            heading, passage_text = shown or ("", "")
            why[e.note_id] = Why(
                fused_gate, word, passage, whole, e.passage, fused, heading, passage_text
            )
    order_now = [items[e.note_id] for e, _ in ranked]
    return Blended(order_now, found, why, pending_notes(store), joined, fused_gate)


def nearest_notes(
    meaning: Meaning, store: Store, text: str
) -> tuple[float, dict[int, tuple[float, float]]] | None:
    """The corpus's floor and every scored note's (best passage, whole note) cosine with
    ``text``; None when the vectors are another model's."""
    from kb.meaning.index import note_evidence, vector_index  # deferred: loads numpy

    embedder = meaning.embedder()
    index = vector_index(store, embedder)
    if index is None:
        return None
    near = note_evidence(index, meaning.encode_query(text))
    scores = {
        int(note): (float(p), float(w))
        for note, p, w in zip(near.note_ids, near.passage, near.whole, strict=True)
    }
    return _floor(store, embedder), scores


def _floor(store: Store, embedder: Embedder) -> float:
    """The floor kb ingest measured for these vectors, else the embedder's fixed one."""
    from kb.meaning.floor import stored_floor  # deferred: only where meaning joins
    from kb.meaning.index import stored_signature  # deferred: loads numpy

    floor = stored_floor(store, stored_signature(embedder))
    return floor if floor is not None else getattr(embedder, "min_similarity", MIN_SIMILARITY)


def _pinned(store: Store, reading: Reading, order: Sequence[Ranked]) -> int | None:
    """The words' first note when its title is the query: found by the words, never
    outranked."""
    if not order:
        return None
    first = store.notes.titles_and_sizes([order[0][0]]).get(order[0][0])
    if first and first[0].casefold() == reading.query.text.strip().casefold():
        return order[0][0]
    return None


def _passage(store: Store, evidence: Evidence) -> tuple[str, str] | None:
    """(heading, text) of the note's best passage, read back from its note."""
    if evidence.position < 0:
        return None
    stored = store.vectors.passage(evidence.note_id, evidence.position)
    row = store.notes.by_id(evidence.note_id)
    if not stored or not row:
        return None
    from kb.meaning.passages import passage_text  # deferred: on first use

    return stored.heading, passage_text(row.text, stored.start, stored.end) or row.title
