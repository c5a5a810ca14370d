"""How near notes are to questions about nothing in them: the floor below which the model's
nearest notes are no answer. Relative to the corpus and the model, not a fixed similarity:
a model whose cosines crowd together, or a folder of near-identical notes, gets its own.

Measured once the vectors change (kb ingest, after embedding) and kept in the store's
meta beside the vectors' signature; a search reads one row. Until it is measured the
embedder's fixed ``min_similarity`` (kb.meaning.hybrid.MIN_SIMILARITY) stands in.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.meaning.embedder import Embedder
    from kb.meaning.index import VectorIndex
    from kb.store import Store

# Questions about nothing a personal knowledge base is likely to hold, in both languages
# and of both shapes (a question, a few words). Their nearest notes are as near as
# unrelated notes get.
BACKGROUND = (
    "how long should I boil an egg for a soft yolk",
    "best time of year to plant tomatoes in the garden",
    "what is the capital of Australia",
    "how do I remove a red wine stain from a carpet",
    "rules of the offside position in football",
    "who painted the ceiling of the Sistine Chapel",
    "how to train a puppy to stop biting",
    "symptoms of a cold versus the flu",
    "cheap flights to Iceland in winter",
    "knitting a scarf for beginners",
    "明天会不会下雨，要不要带伞",
    "红烧肉怎么做才不油腻",
    "猫为什么喜欢踩奶",
    "春节回家买不到火车票怎么办",
    "怎样养好一盆多肉植物",
    "宋朝有哪几位皇帝",
    "跑马拉松前一天应该吃什么",
    "孩子不爱写作业怎么办",
    "婚礼上伴郎要准备些什么",
    "钢琴初学者每天练多久合适",
)
QUANTILE = 0.75  # of the background questions' nearest similarities: the floor
_KEY = "meaning_floor"


def measure(index: VectorIndex, embedder: Embedder) -> float:
    """The floor for these vectors: the QUANTILE of the background questions' nearest
    passage similarities (a few of them may touch a note; most do not)."""
    nearest = []
    for question in BACKGROUND:
        found = index.nearest(embedder.encode_query(question), 1)
        nearest.append(found[0].similarity if found else 0.0)
    return quantile(nearest, QUANTILE)


def quantile(values: list[float], share: float) -> float:
    """The ``share`` quantile of ``values`` (linear between neighbours); 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    at = share * (len(ordered) - 1)
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def remeasure(store: Store, embedder: Embedder) -> float | None:
    """Measure and keep the floor when the vectors changed since it was measured (by
    another model, or by a tenth of the notes or more); return it."""
    from kb.meaning.index import stored_signature, vector_index  # numpy

    signature = stored_signature(embedder)
    notes = store.vectors.count()
    kept = _read(store)
    if kept and kept[0] == signature and _close(kept[1], notes):
        return kept[2]
    index = vector_index(store, embedder)
    if index is None or not notes:
        return None
    floor = measure(index, embedder)
    with store.transaction():
        store.meta.set(_KEY, json.dumps([signature, notes, round(floor, 4)]))
    return floor


def stored_floor(store: Store, signature: str) -> float | None:
    """The floor measured for vectors of this signature, or None (never measured, or for
    another model)."""
    kept = _read(store)
    return kept[2] if kept and kept[0] == signature else None


def _read(store: Store) -> tuple[str, int, float] | None:
    raw = store.meta.get(_KEY)
    try:
        signature, notes, floor = json.loads(raw) if raw else (None, 0, 0.0)
    except (ValueError, TypeError):
        return None
    if not isinstance(signature, str):
        return None
    return signature, int(notes), float(floor)


def _close(measured_at: int, now: int) -> bool:
    return abs(now - measured_at) * 10 < max(measured_at, 1)
