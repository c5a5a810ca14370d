"""kb's one tokenizer for mixed Chinese and English text, shared by every search engine.

Text is split at every script boundary. Latin words, numbers and identifiers are kept
whole (``torch.distributed.fsdp``, ``std::move``, ``flash_attn``) and also split into
parts (``torch``, ``fsdp``, ``Flash``/``Attention``, ``FP``/``16``). Chinese runs become
character bigrams, so recall never depends on a dictionary; single characters and
rjieba's search-mode words are added beside them. Every token is NFKC-normalised and
case-folded, and keeps the offsets of the original characters it came from.

Index side, each field gives two token streams: ``main`` (whole Latin tokens and
Chinese bigrams, in text order, so phrases are adjacent tokens) and ``side`` (parts,
single characters and dictionary words). A document also gives its straddle marks
(``Straddles``): the short Chinese pieces it holds only across rjieba's word boundaries.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import NamedTuple

from kb.text import CJK_CHAR

_LATIN_CHAR = rf"[^\W_{CJK_CHAR}]"
# A whole Latin token: letters and digits joined by connectors (a.b, a::b, a_b, a-b, a/b),
# optionally ending in ++ or # (C++, C#). The Latin class is costly to compile, so the
# pattern names it as few times as it can: this module is on `kb search`'s start-up path.
_LATIN_TOKEN = (
    rf"{_LATIN_CHAR}+(?:(?:\.|::|->|_+|-|/|\+\+|#|'){_LATIN_CHAR}+)*(?:\+\+|#(?![0-9A-Za-z]))?"
)
_SEGMENT = re.compile(rf"(?P<cjk>[{CJK_CHAR}]+)|(?P<latin>{_LATIN_TOKEN})")
# Parts of a whole token: split at connectors, lower→Upper and letter↔digit boundaries.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_A-Za-z]+")


class Token(NamedTuple):
    text: str  # normalised: NFKC, case-folded
    start: int  # offsets into the original string
    end: int


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of one script: ``cjk`` or ``latin``."""

    kind: str
    text: str
    start: int
    end: int


def normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def segments(text: str) -> Iterator[Segment]:
    """Script runs in order; punctuation and spaces between them are dropped."""
    for match in _SEGMENT.finditer(text):
        kind = "cjk" if match.group("cjk") else "latin"
        yield Segment(kind, match.group(), match.start(), match.end())


def latin_parts(token: str) -> list[str]:
    """``FlashAttention`` → Flash, Attention; ``torch.distributed.fsdp`` → its names."""
    return _PART.findall(token)


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def tokens(text: str) -> Iterator[Token]:
    """Main-stream tokens with offsets: whole Latin tokens and Chinese bigrams."""
    for segment in segments(text):
        if segment.kind == "latin":
            yield Token(normalise(segment.text), segment.start, segment.end)
        else:
            run = segment.text
            if len(run) == 1:
                yield Token(run, segment.start, segment.end)
                continue
            for i in range(len(run) - 1):
                yield Token(run[i : i + 2], segment.start + i, segment.start + i + 2)


def index_streams(
    text: str, dictionary_words: bool = True, straddles: Straddles | None = None
) -> tuple[str, str]:
    """The ``main`` and ``side`` token streams of a field, space-separated for FTS5.

    Side tokens are the parts of compound Latin tokens, the last character of each
    Chinese run (every other character starts a bigram, so a prefix query on the main
    stream finds it), and dictionary words of runs longer than two characters. With
    ``straddles``, the field's Chinese runs are added to it (dictionary words needed).
    """
    main: list[str] = []
    side: list[str] = []
    cut = dictionary_words
    for match in _SEGMENT.finditer(text):
        run = match.group()
        if match.lastgroup == "latin":
            main.append(run.lower() if run.isascii() else normalise(run))
            parts = _PART.findall(run)
            if len(parts) > 1:
                side.extend(p.lower() if p.isascii() else normalise(p) for p in parts)
        elif len(run) == 1:
            main.append(run)
        else:
            main.extend([a + b for a, b in pairwise(run)])
            side.append(run[-1])
            if straddles is not None and len(run) == 2:
                straddles.aligned.add(run)  # a run of two characters is a whole word
            if cut and len(run) > 2:
                words = _search_words(run)
                side.extend(w for w, _, _ in words if len(w) > 1)
                if straddles is not None:
                    straddles.add_run(run, word_boundaries(len(run), words))
    return " ".join(main), " ".join(side)


def _search_words(run: str) -> list[tuple[str, int, int]]:
    """rjieba's search-mode words of a run with their offsets: the words of its cut, each
    after its own dictionary sub-words (the same words as ``cut_for_search``)."""
    # Imported here: rjieba costs ~110 ms to load and is needed only when indexing.
    import rjieba

    return rjieba.tokenize(run, mode="search")


def word_boundaries(size: int, words: Iterable[tuple[str, int, int]]) -> list[bool]:
    """For each offset 0..size of a Chinese run, whether a word of its cut starts or ends
    there: no search-mode word spans it (a sub-word lies inside its word)."""
    at_boundary = [True] * (size + 1)
    for _, start, end in words:
        for inside in range(start + 1, end):
            at_boundary[inside] = False
    return at_boundary


STRADDLE_MARK = "~"  # kb's tokenizer never yields it: a straddle mark is no word of the text
STRADDLE_SIZES = (2, 3)  # the lengths of the query words marked


def straddle_mark(word: str) -> str:
    """The token a document holds when every occurrence of ``word`` straddles its words."""
    return STRADDLE_MARK + word


class Straddles:
    """The short Chinese pieces of a document (``STRADDLE_SIZES`` long) and how they stand
    in rjieba's cut: a piece *straddles* where neither its start nor its end is a word
    boundary (限流 in 无限|流量); it is *aligned* where one of them is (a whole word, the
    start or the end of one, 最短 in 最|短路). A document holding a piece only straddled
    holds it by accident, not as a word: ``marks`` names those pieces."""

    __slots__ = ("aligned", "straddled")

    def __init__(self) -> None:
        self.straddled: set[str] = set()
        self.aligned: set[str] = set()

    def add_run(self, run: str, at_boundary: list[bool]) -> None:
        # A piece straddles only with a character of the run on each side of it.
        size = len(run)
        for length in STRADDLE_SIZES:
            for start in range(size - length + 1):
                piece = run[start : start + length]
                if at_boundary[start] or at_boundary[start + length]:
                    self.aligned.add(piece)
                else:
                    self.straddled.add(piece)

    def marks(self) -> list[str]:
        """The marks of the pieces held only straddled, sorted (the same document, the same
        tokens)."""
        return sorted(straddle_mark(piece) for piece in self.straddled - self.aligned)
