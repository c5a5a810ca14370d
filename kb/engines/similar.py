"""More like this: the notes that share a note's most distinctive words. Every engine
finds them the same way (``more_like_this``), asking its own index how many notes hold a
word and which; what counts as a word of a note (``document_terms``: whole Latin words,
whole Chinese dictionary words via ``chinese_words``, no stop words) is here too."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from operator import itemgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kb.engines.contract import SimilarNote
    from kb.words.documents import SearchDocument

MLT_CANDIDATES = 50  # the note's most frequent words: enough to find the distinctive ones
MLT_TERMS = 25
# Each word kept costs a look-up of the notes that hold it: stop once the words kept are
# held by this many notes in all (at 10,000 notes a word may be in up to 520).
MLT_POSTINGS_BUDGET = 2000
# A word is distinctive only when few notes hold it: at most a fifth of a small collection
# (6 of 31 notes), at most 20 + 5% of a large one (520 of 10,000, 5,020 of 100,000: past
# that its idf is under log 20 and its holders list costs more than it tells), and never
# fewer than 3 notes, so two notes of a tiny folder can still share a rare word.
MLT_MIN_CEILING = 3
MLT_SMALL_SHARE = 0.2
MLT_LARGE_SHARE = 0.05
MLT_LARGE_BASE = 20
# Chinese suffixes rjieba's dictionary glues to the next word (持久|化机制) or leaves alone
# (公众|号): they belong to the word before (see chinese_words).
_SUFFIXES = frozenset("化性式型器率者度量号法池库表")
_NUMBER = re.compile("[零〇一二三四五六七八九十百千万亿两几]*[十百千万亿][个次条种位份本张只件数]")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
# A written-out address: its scheme (or www.) up to a space, a bracket, a quote or Chinese.
_URL = re.compile(
    r"(?:\b[A-Za-z][A-Za-z0-9+.-]*://|\bwww\.)[^\s<>()\[\]{}\"'\u3000-\u9fff\uff00-\uffef]*"
)
_CHARACTER_RANGES = re.compile(r"(?:[a-z0-9]-[a-z0-9])+")  # a-za-z0-9: a regex's [a-zA-Z0-9]


def frequency_ceiling(total: int) -> int:
    """The most notes a word may be in and still tell two notes apart (see above)."""
    share = min(total * MLT_SMALL_SHARE, MLT_LARGE_BASE + total * MLT_LARGE_SHARE)
    return max(MLT_MIN_CEILING, int(share))


def more_like_this(
    note_id: int,
    counts: Counter[str],
    total: int,
    frequency: Callable[[str, int], int],
    holders: Callable[[str], Iterable[int]],
    limit: int,
) -> list[SimilarNote]:
    """Notes sharing a note's most distinctive words, scored 0..1 (the share of the note's
    word weight, tf-idf, that the other holds), with the words shared, weightiest first.

    ``counts`` are the note's word counts (``document_terms``). The engine supplies
    ``frequency(word, cap)``, how many notes hold a word counted only up to just past
    ``cap`` (a common word's full count is costly, and past the cap it is not distinctive
    anyway), and ``holders(word)``, the notes that hold it, asked only for the dozen words
    kept. Words spell as ``index_tokens`` says."""
    total = max(total, 1)
    cap = frequency_ceiling(total)
    frequencies = {}
    for word, _ in counts.most_common(MLT_CANDIDATES):
        df = frequency(word, cap)
        if 1 < df <= cap:
            frequencies[word] = df
    weights = {w: (1 + math.log(counts[w])) * math.log(total / df) for w, df in frequencies.items()}
    top = sorted(weights, key=lambda w: (-weights[w], w))
    scores: dict[int, float] = {}
    matched: dict[int, list[str]] = {}
    budget = MLT_POSTINGS_BUDGET
    for word in top[:MLT_TERMS]:
        if budget <= 0:
            break
        budget -= frequencies[word]
        for other in holders(word):
            if other != note_id:
                scores[other] = scores.get(other, 0.0) + weights[word]
                matched.setdefault(other, []).append(word)  # in order of weight
    best = sum(weights[w] for w in top[:MLT_TERMS]) or 1.0
    import heapq  # here only: the search path never needs it

    best_first = heapq.nlargest(limit, scores.items(), key=itemgetter(1))  # as Counter does
    return [(other, score / best, matched[other]) for other, score in best_first]


def _is_mlt_term(token: str, cjk: bool) -> bool:
    """Words worth comparing notes by: Latin words of 3+ letters, Chinese dictionary words
    of 2+ characters, neither of them a stop word."""
    from kb.words.stopwords import is_stop_word  # deferred: 2 modules more

    if is_stop_word(token):
        return False
    if cjk:
        return len(token) >= 2 and all("\u3400" <= ch <= "\u9fff" for ch in token)
    return (
        len(token) >= 3
        and token[0].isalpha()
        and token.isascii()
        and not _CHARACTER_RANGES.fullmatch(token)
    )


def chinese_words(run: str) -> list[str]:
    """The words of a run of Chinese characters, whole: rjieba's exact mode (never the
    search mode's overlapping pieces), mended where its dictionary splits a word it does
    not know. A suffix glued to the next word goes back (持久|化机制 -> 持久化, 机制) or,
    left alone, joins the word before (公众|号 -> 公众号, 线程|池 -> 线程池); any other lone
    character that is not a function word drops the words beside it, which are likely
    pieces of a longer word (实现|高|可用); numbers with their measure word go too."""
    import rjieba  # ~110 ms to load: only related notes and indexing need it

    from kb.words.stopwords import is_stop_word  # deferred: 2 modules more

    words: list[str] = []
    for word in rjieba.cut(run):
        rest = word[1:]
        if (
            words
            and len(rest) >= 2
            and word[0] in _SUFFIXES
            and len(words[-1]) >= 2
            and rest in rjieba.cut_for_search(word)
        ):
            words[-1] += word[0]
            words.append(rest)
        elif words and len(word) == 1 and word in _SUFFIXES and len(words[-1]) >= 2:
            words[-1] += word
        else:
            words.append(word)
    pieces: set[int] = set()
    for i, word in enumerate(words):
        if len(word) == 1 and not is_stop_word(word):
            pieces.update((i - 1, i + 1))
    return [
        w
        for i, w in enumerate(words)
        if len(w) > 1 and i not in pieces and not is_stop_word(w) and not _NUMBER.match(w)
    ]


def index_tokens(word: str) -> list[str]:
    """How a word of ``document_terms`` is spelled in the main index stream: a Latin word
    as itself, a Chinese word as its bigrams (a phrase: adjacent tokens)."""
    if len(word) > 1 and all("\u3400" <= ch <= "\u9fff" for ch in word):
        return [word[i : i + 2] for i in range(len(word) - 1)]
    return [word]


def document_terms(document: SearchDocument) -> Counter[str]:
    """Whole-word counts of a document (Latin words and Chinese dictionary words, no stop
    words), title and headings counting more than body text."""
    from kb.words.tokenize import normalise, segments  # deferred: 17 modules more

    counts: Counter[str] = Counter()
    body = _LATEX_COMMAND.sub(" ", document.body)  # \frac, \text: markup, not words
    body = _URL.sub(" ", body)  # https, github, com: pieces of an address, not words
    weighted = ((document.title, 3), (document.meta, 2), (document.headings, 2), (body, 1))
    for text, weight in weighted:
        for segment in segments(text):
            if segment.kind == "latin":
                words = [normalise(segment.text)]
            else:
                words = chinese_words(segment.text)
            for word in words:
                if _is_mlt_term(word, cjk=segment.kind == "cjk"):
                    counts[word] += weight
    return counts
