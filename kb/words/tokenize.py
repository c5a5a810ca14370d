"""kb's one tokenizer for mixed Chinese and English text, shared by every search engine.

Text is split at every script boundary. Latin words, numbers and identifiers are kept
whole (``torch.distributed.fsdp``, ``std::move``, ``flash_attn``) and also split into
parts (``torch``, ``fsdp``, ``Flash``/``Attention``, ``FP``/``16``). Chinese runs become
character bigrams, so recall never depends on a dictionary; single characters and
rjieba's search-mode words are added beside them. Every token is NFKC-normalised and
case-folded, and keeps the offsets of the original characters it came from.

Index side, each field gives two token streams: ``main`` (whole Latin tokens and
Chinese bigrams, in text order, so phrases are adjacent tokens) and ``side`` (parts,
single characters and dictionary words).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
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


def index_streams(text: str, dictionary_words: bool = True) -> tuple[str, str]:
    """The ``main`` and ``side`` token streams of a field, space-separated for FTS5.

    Side tokens are the parts of compound Latin tokens, the last character of each
    Chinese run (every other character starts a bigram, so a prefix query on the main
    stream finds it), and dictionary words of runs longer than two characters.
    """
    main: list[str] = []
    side: list[str] = []
    cut = _dictionary_words if dictionary_words else None
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
            if cut is not None and len(run) > 2:
                side.extend(w for w in cut(run) if len(w) > 1)
    return " ".join(main), " ".join(side)


def _dictionary_words(run: str) -> list[str]:
    # Imported here: rjieba costs ~110 ms to load and is needed only when indexing.
    import rjieba

    return rjieba.cut_for_search(run)
