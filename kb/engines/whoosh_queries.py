"""A whoosh query for "holds any of these terms", matched as one list of documents.

A prefix (`kerne*`) or a lone Chinese character expands to hundreds of terms over six
fields. As an Or of scored terms, whoosh's pure-Python matchers walk and score every
posting of every term on every hit (`re*` alone took 3 to 4 s on 10,000 notes, `存` 5 to
15 s). Such a term only needs "holds a word starting so", so ``TermSet`` reads each term's
document ids once, unites them per field, and scores a document by the fields it matched:
the field's weight times the union's idf. Its matcher is one sorted list that knows its
maximum score, so top-N searches can still skip (block quality) around it.

Imported only by the whoosh engine, which imports it only once whoosh is known to exist.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable
from typing import Any

from whoosh.matching import ListMatcher, NullMatcher
from whoosh.query import Query


class TermSet(Query):
    """Documents holding any of ``terms`` ((field, word) pairs); see the module docstring."""

    def __init__(self, terms: Iterable[tuple[str, str]], weights: dict[str, float]) -> None:
        self.terms_ = tuple(dict.fromkeys(terms))
        self.weights = weights
        self.boost = 1.0

    def __repr__(self) -> str:
        return f"TermSet({len(self.terms_)} terms)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TermSet) and self.terms_ == other.terms_

    def __hash__(self) -> int:
        return hash(self.terms_)

    def is_leaf(self) -> bool:
        return True

    def has_terms(self) -> bool:
        return True

    def terms(self, phrases: bool = False) -> Iterable[tuple[str, str]]:
        return iter(self.terms_)

    def normalize(self) -> TermSet:
        return self

    def simplify(self, ixreader: Any) -> TermSet:
        return self

    def estimate_size(self, ixreader: Any) -> int:
        return min(
            ixreader.doc_count_all(),
            sum(ixreader.doc_frequency(f, t) for f, t in self.terms_ if (f, t) in ixreader),
        )

    def matcher(self, searcher: Any, context: Any = None) -> Any:
        reader = searcher.reader()
        by_field: dict[str, set[int]] = {}
        for field, word in self.terms_:
            if (field, word) in reader:
                docs = by_field.setdefault(field, set())
                docs.update(reader.postings(field, word).all_ids())
        total = max(reader.doc_count_all(), 1)
        scores: dict[int, float] = {}
        for field, docs in by_field.items():
            # BM25's idf of the union, as whoosh computes it for one term.
            weight = self.weights.get(field, 1.0) * (math.log(total / (len(docs) + 1)) + 1)
            for doc in docs:
                scores[doc] = scores.get(doc, 0.0) + weight
        if not scores:
            return NullMatcher()
        ids = sorted(scores)
        return _ScoredList(ids, [scores[d] for d in ids])


class _ScoredList(ListMatcher):
    """A sorted document list with a score each, treated as one block."""

    _i: int  # ListMatcher's position in the list

    def __init__(self, ids: list[int], scores: list[float], position: int = 0) -> None:
        super().__init__(ids, weights=scores, position=position)
        self._best = max(scores)

    def copy(self) -> _ScoredList:
        return _ScoredList(self._ids, self._weights, self._i)

    def skip_to(self, id: int) -> None:
        self._i = max(self._i, bisect_left(self._ids, id, self._i))

    def supports_block_quality(self) -> bool:
        return True

    def max_quality(self) -> float:
        return self._best

    def block_quality(self) -> float:
        return self._best

    def skip_to_quality(self, minquality: float) -> int:
        if self._best <= minquality:
            self._i = len(self._ids)
        return 0

    def score(self) -> float:
        return self._weights[self._i]
