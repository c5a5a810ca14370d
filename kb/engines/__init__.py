"""Search engines behind one interface; each engine lives in its own module."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from kb.documents import SearchDocument
from kb.query import Query


@dataclass(frozen=True, slots=True)
class EngineHit:
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


class IndexWriter(Protocol):
    """How ingest keeps an engine's index in step with the store."""

    def prepare(self) -> bool:
        """Create the index if needed; True when it must be filled from the whole store."""
        ...

    def clear(self) -> None: ...

    def add(self, note_id: int, streams: tuple[str, ...]) -> None: ...

    def delete(self, documents: list[tuple[int, SearchDocument]]) -> None: ...

    def mark_synced(self, generation: int) -> None: ...


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
) -> list[tuple[int, float, list[str]]]:
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
    scores: Counter[int] = Counter()
    matched: dict[int, list[str]] = {}
    for word in top:
        idf = math.log(total / frequencies[word])
        for other in holders(word):
            if other != note_id:
                scores[other] += idf
                matched.setdefault(other, []).append(word)
    best = sum(math.log(total / frequencies[w]) for w in top) or 1.0
    return [(other, score / best, matched[other][:3]) for other, score in scores.most_common(limit)]
