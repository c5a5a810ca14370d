"""Fitting and judging kb's fused ranking on held-out folds (bench_relevance.py).

For each judged query the benchmark keeps what the ranking is made of: the gate kb took,
the words' order (their first POOL notes), the corpus's floor and the model's cosine of
the query with every note (best passage, whole note). From these, without searching
again:

- model-passage / model-whole: every note by the model alone;
- fused-cv: kb's fusion (kb.meaning.fusion.ranking) with weights fitted on the other
  folds' queries of the same gate, k-fold, every judged set together: held-out only;
- oracle: for each query the better of the words and the model (the room left).

The folds are fixed by a hash of the query id (no randomness between runs).
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

POOL = 30  # notes of the words' order kept per query
FOLDS = 5
WORD_WEIGHTS = tuple(i / 20 for i in range(21))  # steps of 0.05
PASSAGE_SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)  # of meaning's weight, to the best passage


@dataclass(frozen=True)
class QueryFeatures:
    gate: str
    relaxable: bool  # no phrase, filter or OR/NOT: an empty page may be filled (≈)
    pinned: str | None  # the words' first note when its title is the query
    words: list[str]  # the words' order, best first
    floor: float
    meaning: dict[str, tuple[float, float]]  # path: (best passage, whole note) cosines
    held: list[float] | None = None  # share of the query's words each of ``words`` holds


def fusion() -> Any:
    """kb.meaning.fusion of the kb being measured (on sys.path once the kb is opened)."""
    return importlib.import_module("kb.meaning.fusion")


def fused_paths(
    features: QueryFeatures, weights: Any | None, hub: Mapping[str, float]
) -> list[str]:
    """kb's ranking for this query with these weights (None: kb's own), computed from the
    features as kb.meaning.hybrid.blend does. ``hub``: a share to subtract from each
    note's cosines (hubness correction; empty for none)."""
    paths = sorted(set(features.words) | set(features.meaning))
    ids = {path: i for i, path in enumerate(paths)}
    scores = {
        ids[p]: (s[0] - hub.get(p, 0.0), s[1] - hub.get(p, 0.0), -1)
        for p, s in features.meaning.items()
    }
    gate = features.gate if features.relaxable and features.pinned is None else "words"
    ranked = fusion().ranking(
        [ids[p] for p in features.words],
        scores,
        gate,
        features.floor,
        weights,
        ids.get(features.pinned) if features.pinned else None,
        gate != "words",
        features.held,
    )
    return [paths[e.note_id] for e, _ in ranked]


def model_paths(features: QueryFeatures, which: int) -> list[str]:
    """Every note by the model's cosine alone: 0 the best passage, 1 the whole note."""
    return sorted(features.meaning, key=lambda p: (-features.meaning[p][which], p))


def weight_grid() -> list[Any]:
    weights = fusion().Weights
    return [
        weights(words=w, passage=(1 - w) * share, whole=(1 - w) * (1 - share))
        for w in WORD_WEIGHTS
        for share in PASSAGE_SHARES
    ]


def fold_of(query_id: str) -> int:
    return int(hashlib.sha256(query_id.encode()).hexdigest(), 16) % FOLDS


Metric = Callable[[Sequence[str], Mapping[str, int]], "float | None"]


def fit(
    ids: Sequence[str],
    features: Mapping[str, QueryFeatures],
    judgments: Mapping[str, Mapping[str, int]],
    gate: str,
    metric: Metric,
    hub: Mapping[str, Mapping[str, float]],
) -> Any | None:
    """The grid's weights with the best mean metric over the queries of ``gate`` among
    ``ids`` (ties: more weight on the words, the safer side); None: no such query."""
    chosen = [i for i in ids if features[i].gate == gate and features[i].relaxable]
    if not chosen:
        return None
    best, best_value = None, -1.0
    for weights in sorted(weight_grid(), key=lambda w: -w.words):
        values = [
            metric(fused_paths(features[i], weights, hub.get(i, {})), judgments[i]) for i in chosen
        ]
        known = [v for v in values if v is not None]
        value = sum(known) / len(known) if known else 0.0
        if value > best_value + 1e-9:
            best, best_value = weights, value
    return best


def cross_validated(
    features: Mapping[str, QueryFeatures],
    judgments: Mapping[str, Mapping[str, int]],
    metric: Metric,
    hub: Mapping[str, Mapping[str, float]] | None = None,
) -> tuple[dict[str, list[str]], list[dict[str, Any]]]:
    """Each query's fused ranking with weights fitted on the other folds; the weights each
    fold chose (by gate)."""
    hub = hub or {}
    gates = tuple(fusion().WEIGHTS)
    held_out: dict[str, list[str]] = {}
    chosen: list[dict[str, Any]] = []
    judged = [i for i in features if i in judgments]
    for fold in range(FOLDS):
        train = [i for i in judged if fold_of(i) != fold]
        weights = {gate: fit(train, features, judgments, gate, metric, hub) for gate in gates}
        chosen.append(weights)
        for i in features:
            if fold_of(i) == fold:
                w = weights.get(features[i].gate)
                held_out[i] = fused_paths(features[i], w, hub.get(i, {}))
    return held_out, chosen


def fit_all(
    features: Mapping[str, QueryFeatures],
    judgments: Mapping[str, Mapping[str, int]],
    metric: Metric,
) -> dict[str, Any]:
    """The weights fitted on every judged query: what kb ships (reported in-sample only
    as the weights, never as a figure)."""
    judged = [i for i in features if i in judgments]
    return {gate: fit(judged, features, judgments, gate, metric, {}) for gate in fusion().WEIGHTS}


def oracle(
    words: Sequence[str], model: Sequence[str], grades: Mapping[str, int], metric: Metric
) -> list[str]:
    """The better of the two rankings for this query (the words on a tie)."""
    a, b = metric(words, grades), metric(model, grades)
    return list(model) if (b or 0.0) > (a or 0.0) else list(words)
