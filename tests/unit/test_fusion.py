"""One ranking from calibrated scores (kb/meaning/fusion.py) and the corpus's floor
(kb/meaning/floor.py): pure functions, table-driven."""

from __future__ import annotations

import pytest

from kb.meaning.floor import quantile
from kb.meaning.fusion import (
    Evidence,
    Weights,
    fuse,
    meaning_score,
    ranking,
    word_score,
)


@pytest.mark.parametrize(
    ("rank", "expected"),
    [(None, 0.0), (0, 1.0), (3, 0.5), (9, 0.25)],
)
def test_the_words_order_becomes_a_score_that_falls_with_the_place(
    rank: int | None, expected: float
) -> None:
    assert word_score(rank) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("similarity", "floor", "expected"),
    [
        (0.10, 0.20, 0.0),  # below the floor: no evidence at all
        (0.20, 0.20, 0.0),  # as near as unrelated questions come: none either
        (0.60, 0.20, 0.5),  # half-way from the floor to identical
        (1.00, 0.20, 1.0),
        (0.90, 0.80, 0.5),  # a model whose cosines crowd together: the same scale
    ],
)
def test_meaning_counts_from_the_corpus_floor(
    similarity: float, floor: float, expected: float
) -> None:
    assert meaning_score(similarity, floor) == pytest.approx(expected)


def test_the_weights_decide_between_the_words_first_note_and_the_nearest() -> None:
    words_first = Evidence(1, 0, passage=0.3, whole=0.3)
    nearest = Evidence(2, 5, passage=0.8, whole=0.7)
    by_words = fuse([words_first, nearest], Weights(1.0, 0.0, 0.0), floor=0.2)
    by_meaning = fuse([words_first, nearest], Weights(0.2, 0.4, 0.4), floor=0.2)
    assert [e.note_id for e, _ in by_words] == [1, 2]
    assert [e.note_id for e, _ in by_meaning] == [2, 1]


def test_a_title_typed_exactly_stays_first_whatever_meaning_says() -> None:
    titled = Evidence(1, 0, passage=0.0, whole=0.0)
    nearest = Evidence(2, None, passage=0.9, whole=0.9)
    ranked = fuse([nearest, titled], Weights(0.0, 0.5, 0.5), floor=0.2, pinned=1)
    assert [e.note_id for e, _ in ranked] == [1, 2]


MEANING = {
    10: (0.70, 0.65, 0),  # near
    11: (0.35, 0.30, 1),  # a little above the floor
    12: (0.15, 0.10, 0),  # no nearer than unrelated questions
}


@pytest.mark.parametrize(
    ("words", "gate", "fill", "expected"),
    [
        ([12, 11], "words", True, [12, 11]),  # the words decide: their order, nothing added
        ([], "words", True, [10, 11]),  # the words found nothing: the notes above the floor
        ([], "question", True, [10, 11]),
        ([], "words", False, []),  # a phrase or a filter found nothing: no page filled
        ([12], "question", True, [10, 12, 11]),  # fused: the near note comes first
    ],
)
def test_the_page_by_gate(words: list[int], gate: str, fill: bool, expected: list[int]) -> None:
    weights = Weights(0.3, 0.35, 0.35)
    ranked = ranking(words, MEANING, gate, floor=0.2, weights=weights, fill=fill)
    assert [e.note_id for e, _ in ranked] == expected
    fused = [score for _, score in ranked]
    assert all(s is None for s in fused) == (gate == "words" or not words)


def test_a_page_the_words_left_empty_is_not_filled_below_the_floor() -> None:
    assert ranking([], MEANING, "question", floor=0.9) == []


@pytest.mark.parametrize(
    ("values", "share", "expected"),
    [([], 0.75, 0.0), ([0.2], 0.75, 0.2), ([0.1, 0.2, 0.3, 0.4, 0.5], 0.75, 0.4),
     ([0.4, 0.1, 0.3, 0.2], 0.5, 0.25)],
)  # fmt: skip
def test_the_floor_is_a_quantile_of_the_unrelated_questions_nearest(
    values: list[float], share: float, expected: float
) -> None:
    assert quantile(values, share) == pytest.approx(expected)
