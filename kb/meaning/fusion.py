"""One ranking from calibrated scores: pure functions, no numpy.

Each candidate note has a word score (its place in the words' order, normalized to 0..1)
and two meaning scores (the cosine of the query with its best passage and with the whole
note), each made comparable across corpora by the corpus's floor: how near notes are to
questions about nothing in them (kb.meaning.floor). The fused score is a weighted sum
(a convex combination, Bruch, Gai & Ingber, ACM TOIS 2023) whose weights were fitted on
the judged queries of benchmarks/relevance/ (bench_relevance.py --fit, held-out folds).

Which weights apply is the query's gate (kb.meaning.hybrid.gate_of): ``words`` (a phrase,
an identifier, a filter, a title typed exactly...) keeps the words' order; ``question``
and ``keywords`` fuse, each with its own weights.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

NEAREST = 30  # notes the model alone may add to the words' candidates
WORD_HALF = 3.0  # the words' 4th note scores half their 1st: 1 / (1 + rank / WORD_HALF)
HELD_POWER = 2  # a note holding half the words scores a quarter


@dataclass(frozen=True, slots=True)
class Weights:
    words: float
    passage: float
    whole: float


# Fitted on every judged query (172, five corpora) by bench_relevance.py --fit; the
# held-out figures are in docs/meaning.md ("One ranking from calibrated scores").
WEIGHTS = {
    "question": Weights(words=0.3, passage=0.0, whole=0.7),  # 86 judged queries
    "keywords": Weights(words=0.0, passage=0.25, whole=0.75),  # 22: ties keep the words' order
}
GATES = ("words", *WEIGHTS)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What is known of one candidate note for one query."""

    note_id: int
    word_rank: int | None  # its place in the words' order; None: the words did not find it
    passage: float  # cosine of the query with the note's best passage (0: not scored)
    whole: float  # cosine with the whole note
    position: int = -1  # the best passage's position in the note
    held: float = 1.0  # the share of the query's words the note holds

    def scores(self, floor: float) -> tuple[float, float, float]:
        """(word, passage, whole), each 0..1."""
        return (
            word_score(self.word_rank, self.held),
            meaning_score(self.passage, floor),
            meaning_score(self.whole, floor),
        )


def word_score(rank: int | None, held: float = 1.0) -> float:
    """The words' order as a score: 1 for their first note, falling smoothly, 0 for a
    note they did not find; times the square of the share of the query's words the note
    holds. kb's words order by tiers (every word held, in the title, as typed...) before
    any engine score, so the place is what they mean; a question's words are many and
    a note holding two of nine is weak evidence however high it stands (measured: the
    share squared +0.017 MRR@10 held out over all 172 judged queries, +0.08 on Chinese
    questions, no class lower)."""
    return 0.0 if rank is None else held**HELD_POWER / (1.0 + rank / WORD_HALF)


def meaning_score(similarity: float, floor: float) -> float:
    """How far above the corpus's floor, as a share of what is left above it: 0 for a note
    no nearer than notes are to unrelated questions."""
    if similarity <= floor:
        return 0.0
    return min(1.0, (similarity - floor) / max(1.0 - floor, 1e-6))


def fused_score(evidence: Evidence, weights: Weights, floor: float) -> float:
    word, passage, whole = evidence.scores(floor)
    return weights.words * word + weights.passage * passage + weights.whole * whole


def fuse(
    candidates: Iterable[Evidence], weights: Weights, floor: float, pinned: int | None = None
) -> list[tuple[Evidence, float]]:
    """The candidates best first with their fused scores; ``pinned`` (a note whose title
    is the query) first whatever its score. Ties keep the words' order."""
    scored = [(e, fused_score(e, weights, floor)) for e in candidates]
    far = 1 << 30
    scored.sort(
        key=lambda item: (
            item[0].note_id != pinned,
            -item[1],
            far if item[0].word_rank is None else item[0].word_rank,
            -item[0].passage,
        )
    )
    return scored


def above_floor(candidates: Sequence[Evidence], floor: float) -> list[Evidence]:
    """The notes the model finds nearer than unrelated questions are to notes: what a page
    the words left empty shows (≈), nearest first."""
    return [e for e in _nearest(candidates) if max(e.passage, e.whole) > floor]


def _nearest(candidates: Sequence[Evidence]) -> list[Evidence]:
    """The NEAREST notes by the better of their two cosines, among the 2 x NEAREST with
    the nearest best passage (the only ones a search works out the whole note of:
    kb.meaning.index.note_evidence)."""
    by_passage = sorted(candidates, key=lambda e: -e.passage)[: 2 * NEAREST]
    return sorted(by_passage, key=lambda e: -max(e.passage, e.whole))[:NEAREST]


def ranking(
    word_order: Sequence[int],
    meaning: Mapping[int, tuple[float, float, int]],
    gate: str,
    floor: float,
    weights: Weights | None = None,
    pinned: int | None = None,
    fill: bool = True,
    held: Sequence[float] | None = None,
) -> list[tuple[Evidence, float | None]]:
    """The page's order from the words' order (note ids, best first) and the model's
    (note id: best passage cosine, whole-note cosine, best passage position), with the
    fused score where one was computed.

    ``words`` gate: the words' order. Else the words' notes and the NEAREST notes the
    model finds above the floor, by fused score (``weights``, or the gate's; ``held``:
    the share of the query's words each of the words' notes holds). When the words
    found nothing (and ``fill``, i.e. the query was no phrase or filter), the notes
    above the floor, nearest first."""
    evidence = {
        note: Evidence(note, None, passage, whole, at)
        for note, (passage, whole, at) in meaning.items()
    }
    for rank, note in enumerate(word_order):
        passage, whole, at = meaning.get(note, (0.0, 0.0, -1))
        share = held[rank] if held is not None else 1.0
        evidence[note] = Evidence(note, rank, passage, whole, at, share)
    if not word_order:
        return (
            [(e, None) for e in above_floor(list(evidence.values()), floor)[:NEAREST]]
            if fill
            else []
        )
    if gate not in WEIGHTS:
        return [(evidence[note], None) for note in word_order]
    others = _nearest([e for e in evidence.values() if e.word_rank is None])
    candidates = [evidence[note] for note in word_order]
    candidates += [e for e in others if max(e.passage, e.whole) > floor]
    chosen = weights if weights is not None else WEIGHTS[gate]
    return [(e, score) for e, score in fuse(candidates, chosen, floor, pinned)]
