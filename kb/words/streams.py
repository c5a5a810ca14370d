"""The stream layout: what every engine indexes, engine-neutral, and the words ingest keeps.

Each field of a search document (``kb.words.documents.FIELDS``) gives two token streams
(``kb.words.tokenize.index_streams``): the main stream (whole Latin tokens and Chinese
bigrams, in text order) named after the field, and the side stream (identifier parts, the
last character of each Chinese run, dictionary words) named ``<field>_x``. A last stream,
``marks``, holds the document's straddle marks (``kb.words.tokenize.Straddles``: a short
Chinese piece it holds only inside or across longer words, never as a word); it only matches
and never scores, so no note's lengths or scores change for holding some. What a query asks
of the streams is ``kb.query.plan``.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from importlib.util import find_spec
from pathlib import Path

from kb.text import CJK_CHAR
from kb.words.documents import FIELDS, SearchDocument
from kb.words.tokenize import Straddles, index_streams

MARKS = "marks"  # the straddle marks: matched (which notes hold one), never scored
STREAMS = (*(name for field in FIELDS for name in (field, f"{field}_x")), MARKS)
TITLE_STREAMS = ("title", "title_x")
SIDE_STREAMS = tuple(name for name in STREAMS if name.endswith("_x"))
# Bump when kb's tokens change: every index is then rebuilt by the next ingest.
TOKENIZER_VERSION = "4"  # 4: the marks stream


def query_signature() -> str:
    """What searching depends on: how kb tokenizes and the stream layout."""
    return f"kb-tokenizer {TOKENIZER_VERSION}; schema {len(STREAMS)}"


def tokenizer_signature() -> str:
    """What the index's tokens depend on, the segmenter's dictionary (rjieba) included."""
    return f"{query_signature()}; rjieba {_installed_version('rjieba')}"


def _installed_version(package: str) -> str:
    """A package's installed version, read from the .dist-info folder beside it: every
    ingest asks, and importlib.metadata takes ~60 ms to load and search sys.path."""

    spec = find_spec(package)
    if spec is None or spec.origin is None:
        return "?"
    folder = Path(spec.origin).parent.parent
    found = sorted(folder.glob(f"{package}-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len(package) + 1 : -len(".dist-info")]
    from importlib.metadata import PackageNotFoundError, version  # deferred: 62 modules more

    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def document_streams(document: SearchDocument) -> tuple[str, ...]:
    """The streams of a document in ``STREAMS`` order, each space-separated tokens."""

    streams: list[str] = []
    straddles = Straddles()
    for field in document.fields():
        streams.extend(index_streams(field, straddles=straddles))
    streams.append(" ".join(straddles.marks()))
    return tuple(streams)


def vocabulary_words(
    streams: tuple[str, ...], known: AbstractSet[str] = frozenset()
) -> set[tuple[str, str]]:
    """The words of a document for the store's vocabulary, as (word, script): Latin
    tokens and identifier parts with a letter in them, and Chinese dictionary words
    (side streams only: the main streams' Chinese tokens are bigrams, not words).
    Words in ``known`` are left out (ingest passes those written already: after the
    first notes most of a note's words are, and set arithmetic skips them in C)."""
    main: set[str] = set()
    side: set[str] = set()
    for name, stream in zip(STREAMS, streams, strict=True):
        if name == MARKS:
            continue
        (side if name.endswith("_x") else main).update(stream.split())
    side -= known
    main -= known
    main -= side  # a side token's words include whatever it would give as a main one
    words: set[tuple[str, str]] = set()
    for token in side:
        if len(token) <= _MAX_WORD:
            if _starts_cjk(token):
                if len(token) > 1:
                    words.add((token, "cjk"))
            elif any(ch.isalpha() for ch in token):
                words.add((token, "latin"))
    for token in main:
        latin = len(token) <= _MAX_WORD and not _starts_cjk(token)
        if latin and any(ch.isalpha() for ch in token):
            words.add((token, "latin"))
    return words


def _starts_cjk(token: str) -> bool:
    # Every CJK_CHAR range starts at U+3040 or later: most tokens need no regex.
    return token[0] >= "\u3040" and _CJK.match(token) is not None


_MAX_WORD = 40


_CJK = re.compile(f"[{CJK_CHAR}]")
