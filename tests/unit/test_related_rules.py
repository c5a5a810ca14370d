"""Related notes' pure rules (kb/links/related.py): which words are genre words, the cap
on series siblings in the first five, and the points closeness in meaning brings."""

from __future__ import annotations

import pytest

from kb.links.related import (
    MEANING_FROM,
    MEANING_WEIGHT,
    cap_series,
    genre_words,
    meaning_points,
)

# Each note's labels: its title words, tags, series and folder (as related.py reads them).
LABELS = {
    1: frozenset({"redis", "笔记", "/engineering"}),
    2: frozenset({"chinchilla", "论文", "笔记", "/papers"}),
    3: frozenset({"mysql", "笔记", "/db"}),
    4: frozenset({"flashattention", "论文", "笔记", "/papers", "paper"}),
    5: frozenset({"redis", "zset", "限流", "/engineering", "redis-tag"}),
    6: frozenset({"redis", "cluster", "/engineering", "redis-tag"}),
    7: frozenset({"redis", "sentinel", "/ops"}),
}
BODIES = {
    1: "redis 的数据结构",
    2: "scaling",
    3: "事务",
    4: "tiling",
    5: "用 redis 的 zset",
    6: "redis",
    7: "哨兵",
}


def holders_of(word: str) -> list[int]:
    return [note for note, labels in LABELS.items() if word in labels]


def speaks_of(note: int, word: str) -> bool:
    return word in BODIES[note]


@pytest.mark.parametrize(
    ("words", "folders", "expected"),
    [
        # 笔记 in four titles: only the two paper notes share anything else
        ({"笔记"}, (), {"笔记"}),
        # redis: the notes use the word in their text: it is what they are about
        ({"redis"}, (), set()),
        # 论文: two notes only (and they share their folder)
        ({"论文"}, (), set()),
        # a word no title holds
        ({"zset"}, (), set()),
        # the notes folder's own name, whoever holds it
        ({"notes", "笔记"}, ("notes",), {"notes", "笔记"}),
        # case: folder names are compared casefolded, as the words are
        ({"notes"}, ("Notes",), {"notes"}),
    ],
)  # fmt: skip
def test_genre_words(words: set[str], folders: tuple[str, ...], expected: set[str]) -> None:
    labels = lambda note: LABELS.get(note, frozenset())  # noqa: E731
    assert genre_words(words, labels, holders_of, speaks_of, folders) == expected


def test_a_word_whose_notes_share_a_tag_is_not_a_genre_word() -> None:
    tagged = {n: LABELS[n] | {"paper"} for n in (1, 2, 3, 4)}
    assert genre_words({"笔记"}, tagged.__getitem__, holders_of, speaks_of) == set()


def test_holders_offered_by_a_scan_of_titles_are_checked_against_the_labels() -> None:
    # "redis" is in the text of 'redisson' titles too: only the notes whose words hold it
    labels = {1: frozenset({"redisson"}), 2: frozenset({"redisson"}), 3: frozenset({"redis"})}
    found = genre_words({"redis"}, labels.__getitem__, lambda w: [1, 2, 3], lambda n, w: False)
    assert found == set()


S, N = "series", "other"


@pytest.mark.parametrize(
    ("ranked", "expected"),
    [
        ([], []),
        ([N, N, N], [N, N, N]),
        ([(S, 1), (S, 2), (S, 3), (N, 4), (N, 5), (N, 6)],
         [(S, 1), (S, 2), (N, 4), (N, 5), (N, 6), (S, 3)]),
        ([(S, 1), (N, 2), (S, 3), (S, 4), (N, 5), (S, 6)],
         [(S, 1), (N, 2), (S, 3), (N, 5), (S, 4), (S, 6)]),
        # fewer others than places: the siblings fill the list after them
        ([(S, 1), (S, 2), (S, 3), (S, 4)], [(S, 1), (S, 2), (S, 3), (S, 4)]),
        # past the first five, the order is the evidence's
        ([(N, 1), (N, 2), (N, 3), (N, 4), (N, 5), (S, 6), (S, 7), (S, 8)],
         [(N, 1), (N, 2), (N, 3), (N, 4), (N, 5), (S, 6), (S, 7), (S, 8)]),
    ],
)  # fmt: skip
def test_series_siblings_take_at_most_two_of_the_first_five(
    ranked: list[object], expected: list[object]
) -> None:
    assert cap_series(ranked, lambda item: isinstance(item, tuple) and item[0] == S) == expected


@pytest.mark.parametrize(
    ("spreads", "spread", "points"),
    [
        (5.0, 0.0, 0.0),  # every other note alike: no spread, no evidence
        (MEANING_FROM, 0.1, 0.0),  # counted from MEANING_FROM spreads above the mean
        (0.0, 0.1, 0.0),
        (-2.0, 0.1, 0.0),  # below the mean: never negative
        (MEANING_FROM + 1, 0.1, MEANING_WEIGHT),
        (MEANING_FROM + 2, 0.1, 2 * MEANING_WEIGHT),
    ],
)
def test_meaning_points_count_spreads_above_the_usual(
    spreads: float, spread: float, points: float
) -> None:
    mean = 0.4
    assert meaning_points(mean + spreads * spread, mean, spread) == pytest.approx(points)
