"""Search as the user sees it: parse the query, ask the engine, build hits with snippets."""

from __future__ import annotations

import math
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from kb.engines.contract import EngineHit, SearchEngine
from kb.query.plan import AllOf, AnyOf, InTitle, QueryPlan, Term, Text
from kb.query.reading import FEW_MATCHES, Reading, WordReading, describe, read_query
from kb.query.splitting import close_spellings
from kb.query.syntax import And, Node, Or, Phrase, Query, Word, parse_query
from kb.search.snippets import (
    highlight_spans,
    make_snippet,
    plan_patterns,
    reading_patterns,
    word_patterns,
)
from kb.store import Store
from kb.text import clean_line, json_text
from kb.words.tokenize import STRADDLE_SIZES, normalise, segments, straddle_mark

if TYPE_CHECKING:
    from kb.meaning.hybrid import Found, Meaning, Why
    from kb.query.glossary import Glossary

DEFAULT_LIMIT = 20


class SearchHit(NamedTuple):
    note_id: int
    path: str  # relative to the notes root (prefixed with the root's name if several)
    root: str
    rel: str
    title: str
    date: str | None
    tags: list[str]
    snippet: str
    highlights: list[tuple[int, int]]  # spans in snippet
    title_highlights: list[tuple[int, int]]
    score: float
    matched: list[str]  # the query's words this note holds (as typed, or as corrected)
    missing: list[str]  # the words it lacks: only when too few notes hold them all
    near: str = ""  # found by meaning: the passage nearest the query (kb/meaning)
    why: Why | None = None  # how it was ranked, when asked (kb search --explain)

    def as_json(self) -> dict[str, object]:
        data = self._asdict()
        data["highlights"] = [list(span) for span in self.highlights]
        data["title_highlights"] = [list(span) for span in self.title_highlights]
        data["score"] = round(self.score, 4)
        del data["root"], data["rel"], data["why"]
        if self.why is not None:
            data["explain"] = explain_json(self.why)
        return data


def explain_json(why: Why) -> dict[str, object]:
    """A hit's ranking as --json shows it: scores rounded, the passage as plain text."""

    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 4)

    return {
        "gate": why.gate,
        "word_score": rounded(why.word),
        "meaning_passage": rounded(why.passage),
        "meaning_whole": rounded(why.whole),
        "similarity": rounded(why.similarity),
        "fused": rounded(why.fused),
        "passage_heading": clean_line(why.heading),
        "passage": clean_line(why.passage_text),
    }


@dataclass(slots=True)
class SearchResults:
    query: Query
    hits: list[SearchHit] = field(default_factory=list)
    suggestion: str | None = None
    warning: str | None = None
    notices: list[str] = field(default_factory=list)  # how the query was read
    relaxed: bool = False  # some hits lack some of the words
    meaning: bool = False  # meaning joined the ranking (the words were weak: kb/meaning)
    gate: str = ""  # which way the query was ranked, when meaning was asked (kb/meaning)

    def to_json(self) -> str:
        # json_text: exact values, with C1 and bidi controls escaped as \u sequences.
        return json_text([hit.as_json() for hit in self.hits], indent=2)


RELAX_BELOW = 10  # fewer notes than this hold every word: notes holding some follow
POOL = 30  # the engine's best this many are ordered by the tiers below
# A hub page (a README, an index) is mostly links: at least this many links to notes, and
# fewer words than this per link. It ranks below the notes it lists.
HUB_LINKS = 8
HUB_WORDS_PER_LINK = 30
RARITY_CAP = 2000  # notes counted for a word's rarity; past this a word is simply common
TYPED_BONUS = 0.5  # a note holding every word as typed scores half as much again
NEAR_BONUS = 0.5  # and one holding every neighbouring pair of words near, as much again


def run_search(
    store: Store,
    engine: SearchEngine,
    text: str,
    limit: int = DEFAULT_LIMIT,
    prefix_last: bool = False,
    exact: bool = False,
    glossary: Glossary | None = None,
    meaning: Meaning | None = None,
    explain: bool = False,
) -> SearchResults:
    """Search ``text`` (kb's query language). Raises QuerySyntaxError on bad syntax.

    Notes holding every content word come first; when fewer than ``RELAX_BELOW`` do,
    notes holding some of them follow, most words and rarest first. Within each, a
    note holding the words as typed ranks above one holding only their variants or
    partners, and a hub page below the notes it lists."""
    query = parse_query(text, prefix_last=prefix_last)
    reading = read_query(
        query,
        store.vocabulary,
        lambda t: engine.count(t, FEW_MATCHES),
        None if exact else glossary,
        exact=exact,
    )
    planned = reading.plan(query)
    results = SearchResults(query, notices=reading.notices())
    ready = engine.is_ready()
    if not ready:
        results.warning = "the search index is missing or behind the notes: run 'kb ingest'"
    pool = max(limit, POOL)
    plain = _plain(reading)
    strict = _strict_hits(engine, planned, _title_plan(reading, planned, False), plain, pool)
    loose: list[EngineHit] = []
    if reading.relaxable and len(strict) < RELAX_BELOW:
        seen = {hit.note_id for hit in strict}
        relaxed_plan = _relaxed(reading).plan(query)
        loose = [h for h in engine.search(relaxed_plan, pool) if h.note_id not in seen]
    facts = store.notes.titles_and_sizes(h.note_id for h in (*strict, *loose))
    # An index behind the notes may be an older kb's, without the straddle marks (tantivy's
    # schema would not know the field): the words' rule waits for the ingest it asks for.
    typed = {t.text for t in query.positive_terms() if isinstance(t, Word)} if ready else set()
    order = _order(store, engine, reading, planned, strict, loose, facts, plain, typed)
    found: dict[int, Found] = {}
    why: dict[int, Why] = {}
    if meaning is not None and not exact:
        from kb.meaning.hybrid import blend  # cheap; numpy only if the words are weak

        blended = blend(meaning, store, text, reading, order, len(strict), limit, explain)
        order, found, why = blended.order, blended.found, blended.why
        results.meaning, results.gate = blended.joined, blended.gate
        if blended.behind:
            results.notices.append(f"meaning is not yet available for {blended.behind} notes")
    patterns = reading_patterns(reading)
    for note_id, score, held, missing in order[:limit]:
        row = store.notes.by_id(note_id)
        if row is None:
            continue
        title = clean_line(row.title)
        near = found.get(note_id)
        spans: list[tuple[int, int]] = []
        if near is not None:  # found by meaning: its passage, not the words' snippet
            snippet = clean_line(near.passage)
        else:
            snippet, spans = make_snippet(row.text or row.summary or "", patterns, code=row.code)
        matched = held
        if any(_OTHER_FORM in label for label in held):
            whole_text = "\n".join((row.title, row.text, row.code))
            matched = _name_other_forms(held, reading, whole_text)
        results.hits.append(
            SearchHit(
                note_id=row.id,
                path=row.path,
                root=row.root,
                rel=row.rel,
                title=title,
                date=row.date,
                tags=[clean_line(t) for t in store.terms.of_note("tags", row.id)],
                snippet=snippet,
                highlights=spans,
                title_highlights=highlight_spans(title, patterns),
                score=score,
                matched=matched,
                missing=missing,
                near=near.passage if near is not None else "",
                why=why.get(note_id),
            )
        )
    results.relaxed = any(hit.missing for hit in results.hits)
    if not results.hits:
        results.suggestion = _suggest(store, query)
    return results


def _strict_hits(
    engine: SearchEngine, planned: QueryPlan, titles: Text | None, plain: bool, pool: int
) -> list[EngineHit]:
    """The engine's best ``pool`` matches. kb ranks the notes whose title holds every word
    first, but by score some are past the pool (a common word in hundreds of titles): the
    engine's best of those join, from the same pass over the matches."""
    if plain or titles is None:
        return engine.search(planned, pool)
    strict, titled = engine.search_and_titled(planned, titles, pool)
    if len(strict) >= pool:
        seen = {hit.note_id for hit in strict}
        strict += [hit for hit in titled if hit.note_id not in seen]
    return strict


def _relaxed(reading: Reading) -> Reading:
    """The same reading with the top-level words ORed: notes holding any of them."""
    root = reading.query.root
    children = root.children if isinstance(root, And) else (root,)
    words = tuple(c for c in children if isinstance(c, Word))
    rest = tuple(c for c in children if not isinstance(c, Word))
    # A note holding only a fragment of a Chinese run (率 of 命中率) holds none of the
    # query's meaning: it is no partial match.
    fragments = {r.word for r in reading.words if r.fragment}
    words = tuple(w for w in words if w not in fragments) or words
    loosened = And((Or(words), *rest)) if rest else Or(words)
    return Reading(
        Query(loosened, reading.query.text, reading.query.explicit),
        reading.words,
        reading.intact,
        relaxable=False,
    )


def _order(
    store: Store,
    engine: SearchEngine,
    reading: Reading,
    planned: QueryPlan,
    strict: list[EngineHit],
    loose: list[EngineHit],
    facts: dict[int, tuple[str, int]],
    plain: bool,
    typed: AbstractSet[str],
) -> list[tuple[int, float, list[str], list[str]]]:
    """(note, score, words matched, words missing), best first; ``plain`` (one word as
    typed): the engine's order is kept, but for a note holding it only inside longer
    words; ``typed``: the query's words as typed (a note holding one of them only inside
    longer words ranks after the others).

    The engine is asked only what it answers cheaply: which of the candidates hold a
    word as typed (terms, not prefixes), which hold every word in their title, and, for
    notes holding only some words, which words."""
    hits = [h for h in (*strict, *loose) if h.note_id in facts]
    ids = [h.note_id for h in hits]
    labels = [r.shown_as or r.word.text for r in reading.words]
    # Only words typed as such: a piece kb cut from a typed run (算出 of 指数算出来太大) is
    # a guess at a word, as uncertain as the note's cut.
    straddled = [
        _straddled(engine, r, ids) if ids and r.word.text in typed else set() for r in reading.words
    ]
    if (plain and not loose) or not ids:
        # A note holding the word only inside longer words follows the others.
        if any(straddled):
            hits.sort(key=lambda h: h.note_id in straddled[0])
        return [(h.note_id, h.score, list(labels), []) for h in hits]
    strict_ids = {h.note_id for h in strict}
    loose_ids = [h.note_id for h in loose if h.note_id in facts]
    word_texts = [planned.text_of(w.word) or w.exact for w in reading.words]
    # A note the query matched holds every word when the query is words ANDed (with
    # filters or exclusions beside them); only an OR makes the engine say which.
    every = _words_anded(reading.query.root)
    holding: list[set[int]] = []
    as_typed: list[set[int]] = []
    for word, text in zip(reading.words, word_texts, strict=True):
        held = set(strict_ids) if every else engine.holders(text, list(strict_ids))
        if loose_ids:
            held |= engine.holders(text, loose_ids)
        holding.append(held)
        exact = word.exact
        several = len(word.alternatives()) > 1
        as_typed.append(engine.holders(exact, [i for i in ids if i in held]) if several else held)
    intact = [engine.holders(text, ids) for text in reading.intact]
    # A title holding every word: the note is about the query, not just mentioning it. A
    # fragment of a Chinese run is no word on its own, but when a note holds the run as
    # typed, a title without the fragment is not about the query (`MCP 写的一行`: the note
    # holding 写的一行 before the one titled MCP).
    # The engine says which titles hold a word, as it says which notes do: `token` is not
    # in a title `tiktoken`, `Parameter` is in `FlatParameter` (an identifier's parts).
    titles = _title_plan(reading, planned, fragments=any(intact))
    titled_all = engine.holders(titles, ids) if titles is not None else set(ids)
    links = store.links.note_link_counts(ids)
    # How rare each word is, for ordering notes that hold only some of the words: a note
    # holding the rare one (speculative decoding) before one holding two common ones.
    rarity = [1.0] * len(reading.words)
    if loose:
        total = max(store.notes.count(), 1)
        for index, text in enumerate(word_texts):
            holders = engine.count(text, RARITY_CAP)
            rarity[index] = math.log(1 + total / max(holders, 1))
    # Each content word (or its partner) counts once; a fragment of a Chinese run counts
    # for nothing on its own, so a note holding one common piece never leads.
    meaning = [
        0.0 if r.fragment else weight for r, weight in zip(reading.words, rarity, strict=True)
    ]
    near = _nearness(store, reading, ids)
    pairs = max(sum(not r.fragment for r in reading.words) - 1, 0) if near else 0

    def is_hub(note_id: int) -> bool:
        count = links.get(note_id, 0)
        return count >= HUB_LINKS and facts[note_id][1] < count * HUB_WORDS_PER_LINK

    def key(item: tuple[int, EngineHit]) -> tuple[object, ...]:
        position, hit = item
        note_id = hit.note_id
        held = sum(meaning[i] for i, h in enumerate(holding) if note_id in h)
        inside_words = sum(note_id in s for s in straddled)
        whole = sum(note_id in t for t in intact)
        titled = facts[note_id][0].lower() == planned.title_key
        # Words held as typed (not only by a variant or a partner) weigh more, softly: a
        # note about the query in the partner's language can still rank above a mention.
        typed = sum(note_id in t for t in as_typed) / len(reading.words)
        score = hit.score * (1 + TYPED_BONUS * typed)
        # Neighbouring words near each other (a phrase, a window of a few tokens) weigh
        # more, as softly: the engine's score still tells a note about the words from one
        # that only says them side by side (`CUDA kernel` in a lecture on writing them).
        if pairs:
            score *= 1 + NEAR_BONUS * (pairs - near.get(note_id, pairs)) / pairs
        return (
            note_id not in strict_ids,
            -held,
            inside_words,
            not titled,
            note_id not in titled_all,
            -whole,
            is_hub(note_id),
            -score,
            position,
        )

    result = []
    for _, hit in sorted(enumerate(hits), key=key):
        note_id = hit.note_id
        matched = [
            label if note_id in as_typed[index] else f"{label} ({_OTHER_FORM})"
            for index, (label, h) in enumerate(zip(labels, holding, strict=True))
            if note_id in h and not reading.words[index].fragment
        ]
        # A note the query matched as written lacks nothing (`a OR b` needs one of them);
        # a fragment is never named as missing ("without 率低").
        missing = [
            label
            for index, (label, h) in enumerate(zip(labels, holding, strict=True))
            if note_id not in h and note_id not in strict_ids and not reading.words[index].fragment
        ]
        result.append((note_id, hit.score, matched, missing))
    return result


def _straddled(engine: SearchEngine, word: WordReading, ids: list[int]) -> set[int]:
    """The notes among ``ids`` that hold a short Chinese word only inside or across longer
    words (限流 only in 无限流量: kb.words.tokenize.Straddles), and none of its other forms."""
    text = word.word.text
    if word.fragment or len(text) not in STRADDLE_SIZES or not _is_chinese(text):
        return set()
    found = engine.holders(Term(straddle_mark(text)), ids)
    others = word.alternatives()[1:]
    if found and others:
        found -= engine.holders(others[0] if len(others) == 1 else AnyOf(others), list(found))
    return found


def _is_chinese(text: str) -> bool:
    runs = list(segments(text))
    return len(runs) == 1 and runs[0].kind == "cjk" and runs[0].text == text


def _plain(reading: Reading) -> bool:
    """One word at most, as typed, no run split: the engine's order is kb's."""
    if len(reading.words) > 1 or reading.intact:
        return False
    return all(r.alternatives() == (r.exact,) for r in reading.words)


def _title_plan(reading: Reading, planned: QueryPlan, fragments: bool) -> Text | None:
    """A title holding every word of the query (and the fragments of its Chinese runs, if
    ``fragments``), each as any of its alternatives; None for a query without words."""
    texts = tuple(
        planned.text_of(w.word) or w.exact for w in reading.words if fragments or not w.fragment
    )
    if not texts:
        return None
    return InTitle(texts[0] if len(texts) == 1 else AllOf(texts))


def _nearness(store: Store, reading: Reading, ids: list[int]) -> dict[int, int]:
    """For each note, how many pairs of the query's neighbouring words it holds only far
    apart, in its title and its text (``kb.search.proximity``): 0 is every pair near."""
    forms = [word_patterns(r) for r in reading.words if not r.fragment]
    if len(forms) < 2:
        return {}
    from kb.search.proximity import one_pattern, pairs_apart  # for queries of several words

    words = [one_pattern(patterns) for patterns in forms]

    # One query for every candidate's title and text (not the code): 20-25% of the time.
    texts = store.notes.titles_and_texts(ids)
    return {note_id: pairs_apart(texts[note_id], words) for note_id in ids if note_id in texts}


_OTHER_FORM = "\x00"  # marks a word held only by another form, named once the text is read


def _words_anded(node: Node) -> bool:
    children = node.children if isinstance(node, And) else (node,)
    return not any(isinstance(c, Or) for c in children)


def _name_other_forms(matched: list[str], reading: Reading, text: str) -> list[str]:
    """``推理 (inference)``: which other form of a word a note holds, read from its text."""
    named = []
    for label in matched:
        if not label.endswith(f" ({_OTHER_FORM})"):
            named.append(label)
            continue
        word_label = label[: -len(f" ({_OTHER_FORM})")]
        form = next(
            (
                describe(alternative)
                for word in reading.words
                if (word.shown_as or word.word.text) == word_label
                for alternative in word.alternatives()[1:]
                if any(p.search(text) for p in plan_patterns(alternative))
            ),
            None,
        )
        named.append(f"{word_label} ({form})" if form else word_label)
    return named


def _suggest(store: Store, query: Query) -> str | None:
    """Replace each misspelt Latin word by the closest word the notes use, if any changed.
    Read from the store's vocabulary: never a scan of the index."""
    changed = False
    words = []
    for term in query.positive_terms():
        if isinstance(term, Word) and not term.prefix and term.text.isascii():
            near = _closest(normalise(term.text), store)
            if near and near != term.text.lower():
                words.append(near)
                changed = True
                continue
        words.append(f'"{term.text}"' if isinstance(term, Phrase) else getattr(term, "text", ""))
    return " ".join(w for w in words if w) if changed else None


def _closest(word: str, store: Store) -> str | None:
    if len(word) < 3 or not word.isalpha():
        return None
    typos = close_spellings(word, store.vocabulary)
    if typos:
        return typos[0]
    import difflib  # a short word: compare with the words of about its length

    words = store.vocabulary.latin_of_length(len(word) - 1, len(word) + 1, word[0])
    found = difflib.get_close_matches(word, words, n=1, cutoff=0.75)
    return found[0] if found else None
