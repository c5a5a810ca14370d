"""How close together a note holds the words of a query: Meilisearch's proximity rule.

For each pair of neighbouring query words (in the order typed), the distance is the fewest
tokens (kb's main stream: Latin words, Chinese bigrams) from one to the other anywhere in
one text of the note, plus one when they stand in the other order; two parts of one token
(``ServiceCenter`` for ``service center``) are next to each other. A note whose words stand
near each other (a phrase, or a window of a few tokens) is about them together; a note that
holds them far apart (``service`` in one paragraph, a ``Convention Center`` in another) only
mentions each. Pure functions over text and the words' patterns (``kb.search.snippets``):
every engine gets the same rule, and nothing here touches an index.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

from kb.words.tokenize import tokens

# A pair this many tokens apart or more is apart: Meilisearch's cap (its distances stop
# at 8). Nearer than that, a pair is near, whatever the distance: the engine's own score
# orders notes whose words are all near (a finer order would override it with noise).
FAR = 8
MAX_OCCURRENCES = 400  # per word and text: a word on every line says nothing more
MAX_TEXT = 30_000  # characters of a text looked at: a pair near each other shows by then
_GAP_CHARS = 160  # a gap longer than this is far, whatever it holds


def one_pattern(patterns: Sequence[re.Pattern[str]]) -> re.Pattern[str]:
    """A word's patterns (its forms, ``kb.search.snippets.word_patterns``) as one regex, so
    a text is read once per word; case is ignored, as the patterns of Latin forms do."""
    return re.compile("|".join(f"(?:{p.pattern})" for p in patterns), re.IGNORECASE)


def occurrences(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """(start, end) of a word's matches in ``text`` (its first MAX_TEXT characters), in
    text order, at most MAX_OCCURRENCES."""
    found: list[tuple[int, int]] = []
    for match in pattern.finditer(text, 0, MAX_TEXT):
        if match.end() > match.start():
            found.append((match.start(), match.end()))
            if len(found) >= MAX_OCCURRENCES:
                break
    return found


def pair_distance(text: str, first: list[tuple[int, int]], second: list[tuple[int, int]]) -> int:
    """The fewest tokens from an occurrence of the first word to one of the second (FAR when
    either is absent or every pair is far apart); the reversed order costs one more."""
    if not first or not second:
        return FAR
    starts = [start for start, _ in second]
    best_gap, best = _GAP_CHARS + 1, (0, 0, False)
    for start, end in first:
        index = bisect_left(starts, start)
        for other in (index - 1, index, index + 1):
            if not 0 <= other < len(second):
                continue
            o_start, o_end = second[other]
            reverse = o_start < start
            gap = start - o_end if reverse else o_start - end
            gap = max(gap, 0)  # overlapping or touching: parts of one token
            if gap < best_gap or (gap == best_gap and not reverse and best[2]):
                best_gap, best = (
                    gap,
                    (o_end if reverse else end, start if reverse else o_start, reverse),
                )
    if best_gap > _GAP_CHARS:
        return FAR
    between_start, between_end, reverse = best
    between = sum(1 for _ in tokens(text[between_start:between_end])) if best_gap else 0
    return min(FAR, 1 + between + (1 if reverse else 0))


def pairs_apart(texts: Sequence[str], words: Sequence[re.Pattern[str]]) -> int:
    """How many neighbouring pairs of ``words`` (each given by ``one_pattern``) stand FAR or
    more tokens apart in every one of ``texts`` (a title, a body): 0 when each pair is
    within a window somewhere, and for fewer than two words."""
    if len(words) < 2:
        return 0
    found = [[occurrences(text, pattern) for pattern in words] for text in texts]
    return sum(
        all(
            pair_distance(text, spans[index], spans[index + 1]) >= FAR
            for text, spans in zip(texts, found, strict=True)
        )
        for index in range(len(words) - 1)
    )
