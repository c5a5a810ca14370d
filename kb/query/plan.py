"""What every query asks of the streams (``kb.words.streams``), engine-neutral.

``plan_query`` turns a parsed query into a tree of terms, prefixes, token sequences, ANDs and
ORs, plus the optional dictionary boosts and the title key. The engines translate a plan to
their own syntax (FTS5 MATCH strings, whoosh Query objects) and never look at the query text
or the tokenizer again.
"""

from __future__ import annotations

from collections.abc import Mapping

from kb.query.syntax import And, Field, Node, Not, Or, Query, Word
from kb.query.syntax import Phrase as QueryPhrase
from kb.values import Value
from kb.words.tokenize import cjk_bigrams, latin_parts, normalise, segments


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
    # notes whose title holds its words (kb.search.run asks for those beside the best).
    within: Text | None = None

    def text_of(self, node: Node) -> Text | None:
        """The plan of a node of ``root`` made only of text (see ``text_plan``)."""
        return text_plan(node, dict(self.expanded))

    def kept_to(self, within: Text) -> QueryPlan:
        """The same query with its matches kept to the notes matching ``within``."""
        fields = {name: getattr(self, name) for name in self._fields}
        return QueryPlan(**{**fields, "within": within})


def plan_query(
    query: Query,
    read: Query | None = None,
    expanded: Mapping[Word, Text] | None = None,
    boosts: tuple[str, ...] | None = None,
) -> QueryPlan:
    """What ``query`` asks of the streams. A reading (``kb.query.reading.Reading.plan``)
    gives the query as ``read`` (Chinese runs split, function words dropped), each word's
    plan with its alternatives (``expanded``) and the dictionary words worth boosting."""
    read = read if read is not None else query
    expanded = expanded or {}
    ranking = (text_plan(term, expanded) for term in read.positive_terms())
    return QueryPlan(
        root=read.root,
        required=text_plan(read.root, expanded),
        ranking=tuple(t for t in ranking if t is not None),
        boosts=boosts if boosts is not None else tuple(query.dictionary_pieces(MAX_BOOSTS)),
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
