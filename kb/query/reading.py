"""Reading a query as people type it, before any engine sees it.

The parser (``kb.query.syntax``) knows the syntax; this module knows the notes' words (the
store's vocabulary) and the glossary, and turns what was typed into what to look for:

- a run of Chinese is split into the words the notes use (``怎样保证消息队列高可用`` →
  保证, 消息队列, 高可用), and function words (``kb.words.stopwords``) carry no requirement;
- glued scripts are separate words (``显存带宽是GPU的瓶颈``), but a name joined by a
  symbol stays one name (``B+树`` is B followed by 树, never B and 树 anywhere);
- each content word gets alternatives in tiers: the word itself (casefolded, with its
  identifier parts when it has connectors), then its variants (identifier parts found in
  the vocabulary, ``springcloud`` → spring cloud, the same for every spelling; its
  inflections by stem; longer identifiers it begins), then its partners (the glossary,
  ``推理`` → inference) and, when the word itself is rare, close spellings
  (``elasticsaerch`` → elasticsearch) and the longer words it begins (``rocketm``).

Engines never see this: the plan (``kb.query.plan``) carries the alternatives as
ordinary plan nodes, so every engine means the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from kb.query import plan
from kb.query.plan import (
    MAX_BOOSTS,
    AllOf,
    AnyOf,
    Bigrams,
    Prefix,
    QueryPlan,
    Sequence,
    Term,
    phrase_plan,
    plan_query,
    word_plan,
)
from kb.query.splitting import (
    MIN_SPLIT_PIECE,
    Lexicon,
    Partnering,
    chinese_fragments,
    close_spellings,
    split_chinese,
    split_identifier,
    split_started,
    split_word,
)
from kb.query.syntax import MAX_TERMS, And, Field, Node, Not, Or, Query, Word
from kb.query.syntax import Phrase as QueryPhrase
from kb.values import Value
from kb.words.stopwords import STOP_WORDS
from kb.words.tokenize import latin_parts, normalise, segments

if TYPE_CHECKING:
    from kb.query.glossary import Glossary
    from kb.query.plan import Text

# A word found in fewer notes than this also searches close spellings and the longer
# words it begins ("no or few matches", as Meilisearch and Typesense decide it).
FEW_MATCHES = 3
MIN_LONGER = 6  # a word this long also matches longer identifiers it begins


class _Remembering:
    """A lexicon that remembers which words it was asked about, for one query."""

    def __init__(self, lexicon: Lexicon) -> None:
        self.lexicon = lexicon
        self.answers: dict[str, bool] = {}

    def known(self, words: Iterable[str]) -> set[str]:
        words = list(words)
        asked = [w for w in words if w not in self.answers]
        if asked:
            found = self.lexicon.known(asked)
            self.answers.update((w, w in found) for w in asked)
        return {w for w in words if self.answers.get(w)}

    def same_stem(self, word: str) -> list[str]:
        return self.lexicon.same_stem(word)

    def latin_of_length(self, low: int, high: int, first: str | None) -> list[str]:
        return self.lexicon.latin_of_length(low, high, first)

    def completions(self, prefix: str, limit: int) -> list[str]:
        return self.lexicon.completions(prefix, limit)


class _Rationed:
    """A glossary that gives one query at most ``budget`` partners in all, so the query's
    MAX_TERMS cap reaches its expansion too: 32 words each with a crowded kb.yaml group
    search no more alternatives than 32 words."""

    def __init__(self, glossary: Partnering, budget: int) -> None:
        self.glossary = glossary
        self.left = budget

    def partners(self, term: str) -> tuple[str, ...]:
        found = self.glossary.partners(term)[: self.left] if self.left > 0 else ()
        self.left -= len(found)
        return found


class _HeldTerms:
    """The glossary's terms that some note holds, itself or by a partner: a Chinese run
    is kept whole as such a term (缓存命中率 → cache hit rate) before it is split, and
    split into the notes' words when no note holds the term in any language."""

    def __init__(self, glossary: Partnering, count: Callable[[Text], int]) -> None:
        self.glossary = glossary
        self.count = count
        self.held: dict[str, tuple[str, ...]] = {}

    def partners(self, term: str) -> tuple[str, ...]:
        if term not in self.held:
            found = self.glossary.partners(term)
            whole = word_plan(term)
            plans = [p for p in (whole, *_partners(term, self.glossary)) if p is not None]
            self.held[term] = found if found and self.count(_any(*plans)) else ()
        return self.held[term]


class WordReading(Value):
    """One content word of the query and what it matches, tier by tier."""

    word: Word  # the node in the read query
    exact: Text
    variants: tuple[Text, ...] = ()  # ranked just below the word itself
    partners: tuple[Text, ...] = ()  # glossary partners, close spellings: ranked below
    shown_as: str = ""  # what the results show for the word ("elasticsearch" for a typo)
    instead: bool = False  # the word itself matches nothing: results are for shown_as
    # A piece of a Chinese run that is no word the notes or the glossary know (a lone
    # character, 率 of 命中率, or what is left, 率低): searched, but never a matched or a
    # missing word on its own, and a note holding only it is no partial match.
    fragment: bool = False

    def alternatives(self) -> tuple[Text, ...]:
        return (self.exact, *self.variants, *self.partners)


class Reading(Value):
    query: Query  # with Chinese runs split and function words dropped
    words: tuple[WordReading, ...]
    intact: tuple[Text, ...]  # runs that were split, whole: a note holding one ranks higher
    relaxable: bool  # plain words only: a note may match some of them
    # The query's Chinese pieces the notes use as dictionary words (None: not looked up).
    # The others would only add phrases that no note holds to every note's score.
    boosts: tuple[str, ...] | None = None

    def word_plans(self) -> dict[Word, Text]:
        """Each word's plan with every alternative: what a note must match for the word."""
        return {r.word: _any(*r.alternatives()) for r in self.words}

    def plan(self, typed: Query) -> QueryPlan:
        """What the query asks of the engines, its words as read (``typed``: the query as
        parsed, which gives the title key)."""
        return plan_query(typed, self.query, self.word_plans(), self.boosts)

    def reading_of(self, word: Word) -> WordReading | None:
        for reading in self.words:
            if reading.word == word:
                return reading
        return None

    def notices(self) -> list[str]:
        """What the user should know about how the query was read."""
        instead = [(r.word.text, r.shown_as) for r in self.words if r.instead and r.shown_as]
        if not instead:
            return []
        said = ", ".join(f"{new} (for {old})" for old, new in instead)
        return [f"showing results for {said}"]


def read_query(
    query: Query,
    lexicon: Lexicon,
    count: Callable[[Text], int],
    glossary: Glossary | None,
    exact: bool = False,
) -> Reading:
    """What to look for. ``count(text)`` is how many notes match a plan node (the engine
    answers it, capped); ``exact`` turns off typos, prefixes, stems and the glossary."""
    lexicon = _Remembering(lexicon)  # words are split twice below: ask the store once
    intact: list[Text] = []
    fragments: set[str] = set()
    terms = None
    source = query.root
    if glossary is not None and not exact:
        terms = _HeldTerms(glossary, count)
        source = _join_glossary_phrases(query.root, glossary)
    # Function words are dropped when the query has another word; else they are searched.
    pieces = [p for w in _content_words(source) for p in split_word(w.text, lexicon, False, terms)]
    drop = any(normalise(p) not in STOP_WORDS for p in pieces)
    root = _split_words(source, lexicon, intact, drop, terms, fragments)
    if root is None:  # nothing searchable was left
        root = query.root
    words_root = root
    root = _without_fragments(root, fragments)
    read = Query(root, query.text, query.explicit)
    rationed = _Rationed(glossary, MAX_TERMS) if glossary is not None else None
    words = tuple(
        _marked(
            _word_reading(word, lexicon, count, rationed, exact)
            if word.prefix is False or _is_latin(word.text)
            else _prefix_reading(word),
            word.text in fragments,
        )
        for word in _content_words(words_root)
    )
    # A glossary term kept whole that also matches as its words apart: the notes holding
    # it intact come first, as for a run that was split.
    for reading in words:
        apart = any(isinstance(v, AllOf) for v in reading.variants)
        if apart and isinstance(reading.exact, Bigrams) and reading.exact not in intact:
            intact.append(reading.exact)
    relaxable = not query.explicit and _plain_words_only(root)
    pieces = query.dictionary_pieces(MAX_BOOSTS)
    known = lexicon.known(pieces)
    boosts = tuple(p for p in pieces if p in known)
    return Reading(read, words, tuple(intact), relaxable, boosts)


def _without_fragments(root: Node, fragments: set[str]) -> Node:
    """The query's words with the fragments of its Chinese runs left out: a note need
    not hold 率 to hold 缓存击穿率's meaning (the run whole still ranks first)."""
    if not fragments or not isinstance(root, And):
        return root
    kept = [c for c in root.children if not (isinstance(c, Word) and c.text in fragments)]
    if not any(isinstance(c, Word) for c in kept):
        return root  # nothing but fragments: they are what was typed
    return kept[0] if len(kept) == 1 else And(tuple(kept))


def _marked(reading: WordReading, fragment: bool) -> WordReading:
    if not fragment:
        return reading
    fields = {name: getattr(reading, name) for name in WordReading._fields}
    return WordReading(**{**fields, "fragment": True})


# -- splitting words ------------------------------------------------------------------


def _join_glossary_phrases(node: Node, glossary: Glossary) -> Node:
    """Neighbouring words that together are a glossary term become one word:
    `fenwick tree` is 树状数组, where `fenwick` and `tree` alone are not."""
    if not isinstance(node, And):
        return node
    children = list(node.children)
    joined: list[Node] = []
    index = 0
    while index < len(children):
        for size in (3, 2):
            group = children[index : index + size]
            plain = all(isinstance(c, Word) and not c.prefix for c in group)
            if len(group) == size and plain:
                phrase = " ".join(c.text for c in group if isinstance(c, Word))
                if glossary.partners(phrase):
                    joined.append(Word(phrase))
                    index += size
                    break
        else:
            joined.append(children[index])
            index += 1
    return joined[0] if len(joined) == 1 else And(tuple(joined))


def _split_words(
    node: Node,
    lexicon: Lexicon,
    intact: list[Text],
    drop: bool,
    terms: Partnering | None = None,
    fragments: set[str] | None = None,
) -> Node | None:
    """The tree with every plain word split into its words, function words dropped if
    ``drop``; None when nothing is left. Pieces of a split Chinese run that no one knows
    as a word (see ``chinese_fragments``) are added to ``fragments``."""
    if isinstance(node, Word):
        if node.prefix or " " in node.text:  # a glossary phrase stays whole
            return node
        pieces = split_word(node.text, lexicon, drop, terms)
        if len(pieces) > 1 or (pieces and pieces[0] != node.text):
            for run in segments(node.text):
                if run.kind == "cjk" and len(run.text) > 2:
                    whole = phrase_plan(run.text)
                    if whole is not None:
                        intact.append(whole)
                    if fragments is not None:
                        fragments.update(chinese_fragments(run.text, lexicon, terms))
        words = [Word(p) for p in pieces]
        if not words:
            return None
        return words[0] if len(words) == 1 else And(tuple(words))
    if isinstance(node, Not):
        return node  # what is excluded stays as written
    if isinstance(node, And | Or):
        split = (_split_words(c, lexicon, intact, drop, terms, fragments) for c in node.children)
        children = [c for c in split if c is not None]
        if not children:
            return None
        if isinstance(node, And):
            flat: list[Node] = []
            for child in children:
                flat.extend(child.children if isinstance(child, And) else (child,))
            children = flat
        return children[0] if len(children) == 1 else type(node)(tuple(children))
    return node


def _content_words(node: Node) -> list[Word]:
    found: list[Word] = []

    def walk(n: Node) -> None:
        if isinstance(n, Word):
            found.append(n)
        elif isinstance(n, And | Or):
            for child in n.children:
                walk(child)

    walk(node)
    return list(dict.fromkeys(found))


def _plain_words_only(node: Node) -> bool:
    """A top level of plain words (filters, phrases and NOTs beside them are kept as
    requirements): the only queries whose words may be relaxed."""
    children = node.children if isinstance(node, And) else (node,)
    words = [c for c in children if isinstance(c, Word)]
    rest = [c for c in children if not isinstance(c, Word)]
    return len(words) > 1 and all(isinstance(c, Field | QueryPhrase | Not) for c in rest)


# -- alternatives of a word -------------------------------------------------------


def _is_latin(text: str) -> bool:
    runs = list(segments(text))
    return len(runs) == 1 and runs[0].kind == "latin"


def _prefix_reading(word: Word) -> WordReading:
    """A prefix ending in Chinese (`显*`): the word itself ranks above the longer words
    it begins."""

    longer = word_plan(word.text, prefix=True)
    whole = word_plan(word.text)
    assert longer is not None and whole is not None  # the parser checks the stem
    return WordReading(word, whole, variants=(longer,), shown_as=word.text)


def _word_reading(
    word: Word,
    lexicon: Lexicon,
    count: Callable[[Text], int],
    glossary: Partnering | None,
    exact: bool,
) -> WordReading:

    if " " in word.text:  # a glossary phrase: its words anywhere, as a phrase above that
        each = [p for p in (word_plan(w) for w in word.text.split()) if p is not None]
        phrase = phrase_plan(word.text)
        return WordReading(
            word,
            _all(*each),
            variants=(phrase,) if phrase is not None else (),
            partners=_partners(word.text, glossary),
            shown_as=word.text,
        )
    runs = list(segments(word.text))
    if len(runs) > 1 or not runs:  # a name with a symbol: its runs adjacent, in order
        plan = phrase_plan(word.text) or word_plan(word.text)
        assert plan is not None
        return WordReading(word, plan, shown_as=word.text)
    run = runs[0]
    folded = normalise(word.text) if run.kind == "latin" else run.text
    if run.kind == "latin":
        parts = tuple(normalise(p) for p in latin_parts(folded))
        exact_plan: Text = Term(folded) if len(parts) < 2 else _any(Term(folded), Sequence(parts))
    else:
        exact_plan = word_plan(run.text) or Term(run.text)
    partners = _partners(folded, glossary) if not exact else ()
    if run.kind == "cjk" and partners and not exact:
        # A glossary term kept whole (命中率) also matches, below itself, the words the
        # notes would have split it into, apart (缓存 … 命中率 for 缓存命中率).
        return WordReading(
            word,
            exact_plan,
            variants=_split_variant(run.text, lexicon),
            partners=partners,
            shown_as=word.text,
        )
    if exact or run.kind != "latin" or not any(ch.isalpha() for ch in folded):
        return WordReading(word, exact_plan, partners=partners, shown_as=word.text)
    variants: list[Text] = []
    if folded.isalpha() and len(folded) >= 2 * MIN_SPLIT_PIECE:
        pieces = split_identifier(folded, lexicon)
        if pieces:
            variants.append(Sequence(tuple(pieces)))
    # A prefix typed (`roof*`) or the last word as you type; a long word also matches
    # the longer identifiers it begins (ThreadLocal → ThreadLocalRandom), which covers
    # its inflections that begin with it too (latency → latencies is not, lock → locks is).
    open_ended = word.prefix or len(folded) >= MIN_LONGER
    stems = lexicon.same_stem(folded)
    variants.extend(Term(w) for w in stems if not (open_ended and w.startswith(folded)))
    if open_ended:
        variants.append(Prefix(folded))
    matches = count(_any(exact_plan, *variants))
    shown_as, instead = word.text, False
    close: list[Text] = []
    if matches < FEW_MATCHES and len(folded) >= 3:
        if not any(isinstance(v, Prefix) for v in variants):
            variants.append(Prefix(folded))
        if folded.isalpha():
            started = split_started(folded, lexicon)
            if started:
                variants.append(Sequence(tuple(started), open_end=True))
        typos = close_spellings(folded, lexicon)
        close = [Term(t) for t in typos]
        if count(exact_plan) == 0:  # the word itself is in no note: say what was used
            longer = lexicon.completions(folded, 1)
            if longer and count(Prefix(folded)):
                shown_as, instead = longer[0], True
            elif typos:
                shown_as, instead = typos[0], True
    return WordReading(
        word,
        exact_plan,
        variants=tuple(dict.fromkeys(variants)),
        partners=tuple(dict.fromkeys((*partners, *close))),
        shown_as=shown_as,
        instead=instead,
    )


def _split_variant(run: str, lexicon: Lexicon) -> tuple[Text, ...]:
    """A Chinese run no note holds as a word, as the words the notes use, all of them
    anywhere in the note; () when it is a word or does not split into known words."""

    if len(run) < 3 or lexicon.known([run]):
        return ()
    pieces = split_chinese(run, lexicon)
    known = lexicon.known(pieces)
    if len(pieces) < 2 or any(p not in known for p in pieces):
        return ()
    plans = [word_plan(p) for p in pieces]
    return (_all(*(p for p in plans if p is not None)),)


def _all(*texts: Text) -> Text:

    unique = tuple(dict.fromkeys(texts))
    return unique[0] if len(unique) == 1 else AllOf(unique)


def _any(*texts: Text) -> Text:

    unique = tuple(dict.fromkeys(texts))
    return unique[0] if len(unique) == 1 else AnyOf(unique)


def _partners(term: str, glossary: Partnering | None) -> tuple[Text, ...]:

    if glossary is None:
        return ()
    found: list[Text] = []
    for partner in glossary.partners(term):
        plan = phrase_plan(partner) if " " in partner else word_plan(partner)
        if plan is not None:
            found.append(plan)
    return tuple(found)


def describe(text: Text) -> str:
    """A plan node as the user would write it: what a note matched instead of a word."""

    if isinstance(text, plan.Term):
        return text.token
    if isinstance(text, plan.Prefix):
        return text.stem + "*"
    if isinstance(text, plan.CharPrefix):
        return text.char
    if isinstance(text, plan.Bigrams):
        return text.tokens[0] + "".join(t[1:] for t in text.tokens[1:])
    if isinstance(text, plan.Sequence):
        return " ".join(text.tokens)
    if isinstance(text, plan.AllOf):  # every one of them: 消息 队列, the words apart
        return " ".join(describe(child) for child in text.children)
    if isinstance(text, plan.AnyOf):
        return describe(text.children[0])
    return describe(text.child)
