"""Search engines behind one interface; each engine lives in its own module, named in
``kb.engines.registry``. ``kb.engines.plan`` holds what they share: the stream layout and
the query plan each of them translates."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from kb.documents import SearchDocument
    from kb.query import Query
    from kb.store import Store

Related = tuple[int, float, list[str]]  # another note, its score 0..1, the words shared


class EngineHit(NamedTuple):
    note_id: int
    score: float  # higher is better


class SearchEngine(Protocol):
    """What kb's search needs of an engine. Writers are engine-specific."""

    name: str

    def is_ready(self) -> bool:
        """Whether the index exists and reflects the store; search warns when it does not."""
        ...

    def search(self, query: Query, limit: int) -> list[EngineHit]:
        """Note ids matching ``query``, best first."""
        ...

    def vocabulary_near(self, word: str, limit: int) -> list[str]:
        """Indexed words spelled like ``word``, for "did you mean"."""
        ...

    def more_like_this(
        self, note_id: int, document: SearchDocument, limit: int = 30
    ) -> list[Related]:
        """Notes sharing the document's most distinctive words, best first (see the
        module function ``more_like_this``, which engines call with their lookups)."""
        ...


class IndexWriter(Protocol):
    """How ingest keeps an engine's index in step with the store."""

    def prepare(self) -> bool:
        """Create the index if needed; True when it must be filled from the whole store."""
        ...

    def clear(self) -> None: ...

    def add(self, note_id: int, streams: tuple[str, ...]) -> None: ...

    def delete(self, documents: list[tuple[int, SearchDocument]]) -> None: ...

    def mark_synced(self, generation: int) -> None: ...


class EngineEntry(ABC):
    """One engine as ingest and the facade use it: how to read it, how to write it."""

    name: ClassVar[str]
    # True when the index lives in the store's database and is written in the store's
    # transaction; False when it lives outside and catches up in ``after_commit``.
    in_store: ClassVar[bool]

    @abstractmethod
    def reader(self, index_dir: Path, store: Store) -> SearchEngine:
        """The engine searching through ``store`` (one thread's read connection)."""

    @abstractmethod
    def writer(self, store: Store) -> IndexWriter:
        """What ingest writes to inside the store's transaction."""

    def after_commit(  # noqa: B027 - a no-op unless the index lives outside the store
        self,
        index_dir: Path,
        store: Store,
        streams: dict[int, tuple[str, ...]] | None,
        rebuild: bool,
    ) -> None:
        """Bring an index kept outside the store up to date once the store committed;
        ``streams`` are the tokens of the notes this ingest wrote (None when
        ``in_store``). An index in the store committed with it: nothing to do."""


MLT_CANDIDATES = 100  # the note's most frequent words: plenty to find the distinctive ones
MLT_TERMS = 12
MLT_MAX_SHARE = 0.05  # a word in more than 5% of the notes is not distinctive


def more_like_this(
    note_id: int,
    counts: Counter[str],
    total: int,
    frequency: Callable[[str, int], int],
    holders: Callable[[str], Iterable[int]],
    limit: int,
) -> list[Related]:
    """Notes sharing a note's most distinctive words, scored 0..1 with the words shared.

    ``counts`` are the note's word counts. The engine supplies ``frequency(word, cap)``,
    how many notes hold a word counted only up to just past ``cap`` (a common word's full
    count is costly, and past the cap it is not distinctive anyway), and ``holders(word)``,
    the notes that hold it, asked only for the dozen words kept."""
    total = max(total, 1)
    cap = max(20, int(total * MLT_MAX_SHARE))
    frequencies = {}
    for word, _ in counts.most_common(MLT_CANDIDATES):
        df = frequency(word, cap)
        if 1 < df <= cap:
            frequencies[word] = df
    weights = {w: (1 + math.log(counts[w])) * math.log(total / df) for w, df in frequencies.items()}
    top = sorted(weights, key=lambda w: (-weights[w], w))[:MLT_TERMS]
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    for word in top:
        idf = math.log(total / frequencies[word])
        for other in holders(word):
            if other != note_id:
                scores[other] = scores.get(other, 0.0) + idf
                matched.setdefault(other, []).append(word)
    best = sum(math.log(total / frequencies[w]) for w in top) or 1.0
    import heapq  # here only: the search path never needs it

    best_first = heapq.nlargest(limit, scores.items(), key=itemgetter(1))  # as Counter does
    return [(other, score / best, matched[other][:3]) for other, score in best_first]


def _is_mlt_term(token: str, cjk: bool) -> bool:
    """Words worth comparing notes by: Latin words of 3+ letters, Chinese dictionary words."""
    if cjk:
        return len(token) >= 2 and all("\u3400" <= ch <= "\u9fff" for ch in token)
    return len(token) >= 3 and token[0].isalpha() and token.isascii()


def document_terms(document: SearchDocument) -> Counter[str]:
    """Term counts of a document, title and headings counting more than body text."""
    from kb.tokenize import index_streams

    counts: Counter[str] = Counter()
    weighted = ((document.title, 3), (document.meta, 2), (document.headings, 2), (document.body, 1))
    for text, weight in weighted:
        main, side = index_streams(text)
        for token in main.split():
            if _is_mlt_term(token, cjk=False):
                counts[token] += weight
        for token in side.split():
            if _is_mlt_term(token, cjk=True):
                counts[token] += weight
    return counts
