"""What every engine indexes and what every query asks of it, engine-neutral.

**Stream layout.** Each field of a search document (``kb.ingest.documents.FIELDS``) gives two
token streams (``kb.query.tokenize.index_streams``): the main stream (whole Latin tokens and
Chinese bigrams, in text order) named after the field, and the side stream (identifier
parts, the last character of each Chinese run, dictionary words) named ``<field>_x``.
A last stream, ``marks``, holds the document's straddle marks (``kb.query.tokenize.Straddles``:
a short Chinese piece it holds only inside or across longer words, never as a word); it only
matches and never scores, so no note's lengths or scores change for holding some.

**Query plan.** ``plan_query`` turns a parsed query into what it asks of those streams:
a tree of terms, prefixes, token sequences, ANDs and ORs, plus the optional dictionary
boosts and the title key. The engines translate a plan to their own syntax (FTS5 MATCH
strings, whoosh Query objects) and never look at the query text or the tokenizer again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING

from kb.ingest.documents import FIELDS, SearchDocument
from kb.query.syntax import And, Field, Node, Not, Or, Query, Word
from kb.query.syntax import Phrase as QueryPhrase
from kb.query.tokenize import (
    Straddles,
    cjk_bigrams,
    index_streams,
    latin_parts,
    normalise,
    segments,
)
from kb.text import CJK_CHAR
from kb.values import Value

if TYPE_CHECKING:
    from kb.query.reading import Reading

# -- the stream layout ---------------------------------------------------------------

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


# -- the query plan ------------------------------------------------------------------


class Term(Value):
    """One token, in any stream."""

    token: str


class Prefix(Value):
    """Every token that starts with ``stem`` (a typed prefix, or the last word as you type)."""

    stem: str


class CharPrefix(Value):
    """A lone Chinese character: the first of a main-stream bigram, a one-character run,
    or the last character of a run (a side token)."""

    char: str


class Bigrams(Value):
    """A Chinese run of a word: its bigrams adjacent and in order, in the main streams
    (only they hold bigrams)."""

    tokens: tuple[str, ...]


class Sequence(Value):
    """Tokens adjacent and in order: a quoted phrase, or an identifier's parts. With
    ``open_end`` the last token is a prefix (a phrase ending in one Chinese character
    starts the next bigram)."""

    tokens: tuple[str, ...]
    open_end: bool = False


class AnyOf(Value):
    children: tuple[Text, ...]


class AllOf(Value):
    """Every child and none of ``excluded``."""

    children: tuple[Text, ...]
    excluded: tuple[Text, ...] = ()


class InTitle(Value):
    """The child, matched in the title streams only (``title:``)."""

    child: Text


Text = Term | Prefix | CharPrefix | Bigrams | Sequence | AnyOf | AllOf | InTitle

MAX_BOOSTS = 24


class QueryPlan(Value):
    root: Node  # the query tree as read, for the filters an engine evaluates itself
    required: Text | None  # the whole query, when it is made of text alone
    ranking: tuple[Text, ...]  # each positive term, whichever of them a note matched
    boosts: tuple[str, ...]  # dictionary words a Chinese term may be: side streams, optional
    title_key: str  # a note titled so comes first
    # Each word's plan with its alternatives (kb.query.reading): what a note must match for it.
    expanded: tuple[tuple[Word, Text], ...] = ()
    # Matches must match this too, and it scores nothing: the same query's best among the
    # notes whose title holds its words (kb.query.search asks for those beside the best).
    within: Text | None = None

    def text_of(self, node: Node) -> Text | None:
        """The plan of a node of ``root`` made only of text (see ``text_plan``)."""
        return text_plan(node, dict(self.expanded))

    def kept_to(self, within: Text) -> QueryPlan:
        """The same query with its matches kept to the notes matching ``within``."""
        fields = {name: getattr(self, name) for name in self._fields}
        return QueryPlan(**{**fields, "within": within})


def plan_query(query: Query, reading: Reading | None = None) -> QueryPlan:
    """What ``query`` asks of the streams; with a ``reading`` (kb.query.reading), its words as
    read: split, with their alternatives."""
    read = reading.query if reading is not None else query
    expanded = reading.word_plans() if reading is not None else {}
    ranking = (text_plan(term, expanded) for term in read.positive_terms())
    return QueryPlan(
        root=read.root,
        required=text_plan(read.root, expanded),
        ranking=tuple(t for t in ranking if t is not None),
        boosts=(
            reading.boosts
            if reading is not None and reading.boosts is not None
            else tuple(query.dictionary_pieces(MAX_BOOSTS))
        ),
        title_key=query.title_key(),
        expanded=tuple(expanded.items()),
    )


def text_plan(node: Node, expanded: Mapping[Word, Text] | None = None) -> Text | None:
    """The plan of a node made only of words, phrases and title filters; None for
    anything holding another filter, or nothing searchable. ``expanded`` gives the plan of
    a word read with its alternatives."""
    if isinstance(node, Word):
        if expanded and node in expanded:
            return expanded[node]
        return word_plan(node.text, node.prefix)
    if isinstance(node, QueryPhrase):
        return phrase_plan(node.text)
    if isinstance(node, Field):
        return _title_plan(node) if node.name == "title" else None
    if isinstance(node, Or):
        alternatives = [text_plan(c, expanded) for c in node.children]
        if any(a is None for a in alternatives):
            return None
        return AnyOf(tuple(a for a in alternatives if a is not None))
    if isinstance(node, And):
        positive = [text_plan(c, expanded) for c in node.children if not isinstance(c, Not)]
        negative = [text_plan(c.child, expanded) for c in node.children if isinstance(c, Not)]
        if not positive or any(p is None for p in positive + negative):
            return None
        return AllOf(
            tuple(p for p in positive if p is not None),
            tuple(n for n in negative if n is not None),
        )
    return None


def word_plan(text: str, prefix: bool = False) -> Text | None:
    """One query word; a word mixing scripts needs each of its runs."""
    parts: list[Text] = []
    runs = list(segments(text))
    for index, run in enumerate(runs):
        if run.kind == "cjk":
            if len(run.text) == 1:
                parts.append(CharPrefix(run.text))
            else:
                parts.append(Bigrams(tuple(cjk_bigrams(run.text))))
            continue
        whole = normalise(run.text)
        if prefix and index == len(runs) - 1:
            parts.append(Prefix(whole))
            continue
        pieces = tuple(normalise(p) for p in latin_parts(run.text))
        if len(pieces) > 1:  # an identifier: the whole token, or its parts in order
            parts.append(AnyOf((Term(whole), Sequence(pieces))))
        else:
            parts.append(Term(whole))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else AllOf(tuple(parts))


def phrase_plan(text: str) -> Sequence | None:
    """An exact phrase: its main-stream tokens adjacent and in order."""
    tokens: list[str] = []
    runs = list(segments(text))
    for run in runs:
        tokens.extend(cjk_bigrams(run.text) if run.kind == "cjk" else [normalise(run.text)])
    if not tokens:
        return None
    ends_with_char = runs[-1].kind == "cjk" and len(runs[-1].text) == 1
    return Sequence(tuple(tokens), open_end=ends_with_char)


def _title_plan(node: Field) -> Text | None:
    if node.phrase:
        inner: Text | None = phrase_plan(node.value)
    else:
        words = [w for w in (word_plan(text) for text in node.value.split()) if w is not None]
        inner = AllOf(tuple(words)) if words else None
    return InTitle(inner) if inner is not None else None
