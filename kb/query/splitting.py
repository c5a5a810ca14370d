"""Splitting what was typed into the notes' words: Chinese runs into dictionary words
(the notes' vocabulary, the glossary's terms, the function words), glued scripts apart
unless a symbol joins them into a name, identifiers into their parts, and the close
spellings of a word (kb.query.reading decides what each piece means)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from kb.words.stopwords import STOP_WORDS
from kb.words.tokenize import normalise, segments

MAX_CHINESE_WORD = 8  # the longest dictionary word tried when splitting a Chinese run


MIN_SPLIT_PIECE = 3  # identifier parts found in the vocabulary: `springcloud` = spring+cloud


MAX_TYPOS = 3  # close spellings tried per word


MIN_SWAPPED = 3  # the shortest word whose swapped neighbours are a close spelling


# Characters that join script runs into one name (B+树, C#编程, .NET平台); anything
# else between runs (a space, Chinese or Latin punctuation) separates words.
NAME_JOINERS = frozenset("+#.:/-_@&'")


class Lexicon(Protocol):
    """The notes' words: ``kb.store.vocabulary.VocabularyDao`` is one."""

    def known(self, words: Iterable[str]) -> set[str]: ...

    def same_stem(self, word: str) -> list[str]: ...

    def latin_of_length(self, low: int, high: int, first: str | None) -> list[str]: ...

    def completions(self, prefix: str, limit: int) -> list[str]: ...


class Partnering(Protocol):
    """What gives a word its glossary partners: ``kb.query.glossary.Glossary`` is one."""

    def partners(self, term: str) -> tuple[str, ...]: ...


def split_word(
    text: str, lexicon: Lexicon, drop: bool = True, terms: Partnering | None = None
) -> list[str]:
    """The words of one typed word: script runs apart unless a symbol joins them into a
    name, Chinese runs split into dictionary words (the notes' words and the glossary's
    ``terms``), function words dropped if ``drop``."""
    runs = list(segments(text))
    if not runs:
        return []
    groups: list[list[int]] = [[0]]
    for index in range(1, len(runs)):
        between = text[runs[index - 1].end : runs[index].start]
        joined = bool(between) and all(ch in NAME_JOINERS for ch in between)
        if joined:
            groups[-1].append(index)
        else:
            groups.append([index])
    pieces: list[str] = []
    for group in groups:
        if len(group) > 1:  # a name: B+树, C#编程
            pieces.append(text[runs[group[0]].start : runs[group[-1]].end])
            continue
        run = runs[group[0]]
        if run.kind == "cjk" and len(run.text) > 2:
            pieces.extend(split_chinese(run.text, lexicon, terms))
        elif run.kind == "latin" and run.start == 0 and run.end == len(text):
            pieces.append(text)  # keep the word as typed: Thread.sleep(), C++
        else:
            pieces.append(run.text)
    return [p for p in pieces if normalise(p) not in STOP_WORDS] if drop else pieces


def split_chinese(run: str, lexicon: Lexicon, terms: Partnering | None = None) -> list[str]:
    """A Chinese run as the fewest words the notes, the glossary's ``terms`` (or the stop
    list) know, so a run no note holds keeps its meaning when the glossary has it
    (命中率 → hit rate, never 命中 + 率); characters in no known word stay together as
    one unknown word, a one-character function word between them included (命中率 with
    none of its words known is one word, not 命, 中, 率)."""
    size = len(run)
    known = known_pieces(run, lexicon, terms)
    # best[i]: (pieces, unknown characters) of the best split of run[:i]
    best: list[tuple[int, int, int]] = [(0, 0, 0)] + [(size + 1, size + 1, 0)] * size
    for end in range(1, size + 1):
        for start in range(max(0, end - MAX_CHINESE_WORD), end):
            piece = run[start:end]
            if len(piece) > 1 and piece not in known:
                continue
            unknown = 1 if len(piece) == 1 and piece not in STOP_WORDS else 0
            pieces, unknowns, _ = best[start]
            option = (pieces + 1, unknowns + unknown, start)
            if option[:2] < best[end][:2]:
                best[end] = option
    cuts: list[str] = []
    end = size
    while end > 0:
        start = best[end][2]
        cuts.append(run[start:end])
        end = start
    cuts.reverse()

    def lone(index: int) -> bool:  # a character in no word anyone knows
        return 0 <= index < len(cuts) and len(cuts[index]) == 1 and cuts[index] not in known

    # A one-character function word between two unknown characters is part of their word.
    loose = {i for i, piece in enumerate(cuts) if lone(i) or (lone(i - 1) and lone(i + 1))} - {
        i for i, piece in enumerate(cuts) if len(piece) > 1
    }
    merged: list[str] = []  # adjacent unknown characters: one word the notes may not use
    for index, piece in enumerate(cuts):
        if index in loose and merged and index - 1 in loose:
            merged[-1] += piece
            continue
        merged.append(piece)
    return merged


def known_pieces(run: str, lexicon: Lexicon, terms: Partnering | None) -> set[str]:
    """The pieces of a run (2 to MAX_CHINESE_WORD characters) that are words: in the
    notes' vocabulary, a glossary term, or a function word."""
    size = len(run)
    candidates = {
        run[i:j] for i in range(size) for j in range(i + 2, min(size, i + MAX_CHINESE_WORD) + 1)
    }
    known = lexicon.known(candidates) | (candidates & STOP_WORDS)
    if terms is not None:
        known |= {c for c in candidates - known if terms.partners(c)}
    return known | {ch for ch in run if ch in STOP_WORDS}


def chinese_fragments(run: str, lexicon: Lexicon, terms: Partnering | None = None) -> set[str]:
    """The pieces of a split run that are no word: a lone character that is not a function
    word, or unknown characters left together (率低 of 缓存命中率低). Empty when the run
    is one piece: the word as typed is never a fragment of itself."""
    pieces = split_chinese(run, lexicon, terms)
    if len(pieces) < 2:
        return set()
    known = known_pieces(run, lexicon, terms)
    return {p for p in pieces if p not in known}


def split_identifier(word: str, lexicon: Lexicon) -> list[str]:
    """``springcloud`` → spring, cloud when the notes use both words: the parts a
    capitalised spelling would have had, found the same for every spelling."""
    size = len(word)
    candidates = {
        word[i:j]
        for i in range(size)
        for j in range(i + MIN_SPLIT_PIECE, size + 1)
        if (i, j) != (0, size)
    }
    known = lexicon.known(candidates)
    best: list[list[str] | None] = [[]] + [None] * size
    for end in range(MIN_SPLIT_PIECE, size + 1):
        for start in range(end - MIN_SPLIT_PIECE + 1):
            head = best[start]
            if head is None or word[start:end] not in known:
                continue
            option = [*head, word[start:end]]
            current = best[end]
            if current is None or len(option) < len(current):
                best[end] = option
    found = best[size]
    return found if found and len(found) > 1 else []


def split_started(word: str, lexicon: Lexicon) -> list[str]:
    """A partial identifier as words the notes use and the start of one more:
    `servicecen` → service, cen… (the `service-center` or `ServiceCenter` being typed)."""
    heads = [word[:i] for i in range(len(word) - 2, MIN_SPLIT_PIECE - 1, -1)]
    known = lexicon.known(heads)
    for head in heads:  # the longest known head first
        if head in known and lexicon.completions(word[len(head) :], 1):
            return [head, word[len(head) :]]
    return []


def close_spellings(word: str, lexicon: Lexicon) -> list[str]:
    """Vocabulary words one edit from a word of 5+ letters, two from 9+ (Meilisearch's
    and Typesense's defaults; a swap of two letters is one edit); from a word of 3 or 4
    letters that no note holds, only a swap of two neighbours (``ebfp`` → ebpf), the one
    slip of the fingers that keeps every letter: any other edit of so short a word is
    another word."""
    if len(word) < MIN_SWAPPED or not (word.isascii() and word.isalpha()):
        return []  # numbers and identifiers with digits are exact (`word3x7`, `fp16`)
    if len(word) < 5:
        if lexicon.known([word]):
            return []  # a short word the notes use is meant as typed (form, not from)
        return sorted(lexicon.known(neighbour_swaps(word)))[:MAX_TYPOS]
    if len(word) < 9:
        # Every spelling one edit away, looked up in the vocabulary's index: a few hundred
        # keys, where comparing with the vocabulary would first load and import it.
        return sorted(lexicon.known(one_edit(word)) - {word})[:MAX_TYPOS]
    candidates = lexicon.latin_of_length(len(word) - 2, len(word) + 2, None)
    # Optimal string alignment distance in C++ (rapidfuzz), imported only here: ~70 ms.
    from rapidfuzz.distance import OSA

    scored = []
    for candidate in candidates:
        distance = OSA.distance(word, candidate, score_cutoff=2)
        if candidate != word and distance <= 2:
            scored.append((distance, candidate))
    scored.sort()
    return [c for _, c in scored[:MAX_TYPOS]]


LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def neighbour_swaps(word: str) -> set[str]:
    """Every string made by swapping two neighbouring letters of ``word``."""
    return {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}


def one_edit(word: str) -> set[str]:
    """Every string one deletion, swap of neighbours, replacement or insertion away."""
    letters = set(LETTERS) | set(word)
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    deletes = {a + b[1:] for a, b in splits if b}
    swaps = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaces = {a + c + b[1:] for a, b in splits if b for c in letters}
    inserts = {a + c + b for a, b in splits for c in letters}
    return deletes | swaps | replaces | inserts
