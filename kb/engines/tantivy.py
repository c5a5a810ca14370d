"""The third engine: a tantivy index in ``index/tantivy/``, same query meaning as FTS5.

tantivy (the Rust engine behind Quickwit) ranks with block-max WAND: a query's best
``limit`` notes are found without scoring every note that matches, which is what FTS5's
``ORDER BY bm25 LIMIT`` cannot do. Its Python binding cannot call a Python tokenizer, so
documents reach it already tokenized by kb (the same ten streams FTS5 gets, one field
each, with FTS5's weights as boosts) and its fields split on whitespace only.

Like whoosh's, the index commits after the store: it records the store generation it
reflects in a meta document committed with the notes' documents (tantivy's commit is one
atomic rename of ``meta.json``), and ``TantivyIndex.sync`` brings a lagging index up to
date from the store's per-note generations and tombstones. A rebuild is made in a new
folder and swapped in.

Prefixes are expanded from the index's own term dictionary (exact, in Rust): up to
``PREFIX_CAP`` words per field are scored as terms; past that the field matches by a
regular expression that scores a constant, so no note is lost.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.engines import synced
from kb.engines.contract import EngineHit, SimilarNote, first_page, two_searches
from kb.engines.similar import document_terms, index_tokens, more_like_this
from kb.engines.synced import SyncedEntry
from kb.engines.tantivy_index import (
    FIELDS,
    MAIN,
    PACKAGE,
    PREFIX_CAP,
    SCHEMA_VERSION,
    SCORED,
    TITLE,
    WEIGHT,
    IndexDamaged,
    TantivyIndex,
    guarded,
    require,
)
from kb.query import plan
from kb.query.plan import QueryPlan, Text, plan_query
from kb.query.syntax import And, Field, Node, Not, Or, Phrase, Query, Word

if TYPE_CHECKING:
    from kb.store import Store
    from kb.words.documents import SearchDocument

# Text under an AND is matched only among the notes its filters kept, up to this many
# (a term set of note ids); past it, matched everywhere and intersected.
AMONG_AT_MOST = 20_000


class TantivyEngine:
    name = "tantivy"

    def __init__(self, index_dir: Path, store: Store) -> None:
        require()
        import tantivy  # the engine's own module: loaded only when tantivy is the engine

        self.tantivy = tantivy
        self.index = TantivyIndex(index_dir)
        self.store = store
        self._ix: Any = None
        self._stamp: tuple[int, int] | None = None

    def _open(self) -> Any:
        """The index as last committed: opened again when ``meta.json`` was replaced (each
        commit renames a new one in; a rebuild swaps the whole folder)."""
        try:
            info = (self.index.path / "meta.json").stat()
        except FileNotFoundError:
            self._ix = self._stamp = None
            return None
        except OSError as exc:
            raise IndexDamaged(self.index.path, exc) from exc
        stamp = (info.st_ino, info.st_mtime_ns)
        if self._ix is None or stamp != self._stamp:
            index = self.index.open()
            state = self.index.state(index)
            # An index of another schema (an older kb's) cannot answer today's plans (a field
            # it lacks is an error): it is as good as missing until the ingest rebuilds it.
            fits = state is not None and state[1].startswith(f"tantivy {SCHEMA_VERSION};")
            self._ix = index if fits else None
            self._stamp = stamp
        return self._ix

    def _reading(self, action: Callable[[Any], Any], default: Any) -> Any:
        index = self._open()
        if index is None:
            return default
        return guarded(self.index.path, lambda: action(index))

    def is_ready(self) -> bool:
        index = self._open()
        if index is None:
            return False
        return synced.in_step(self.index.state(index), self.store, "tantivy", SCHEMA_VERSION)

    # -- translating the query plan ----------------------------------------------------

    def _query(self, searcher: Any, text: plan.Text, fields: tuple[str, ...] = FIELDS) -> Any:
        """A plan as a tantivy query over ``fields`` (all of them, or the title's)."""
        q = self.tantivy.Query
        if isinstance(text, plan.Term):
            return self._any([self._term(f, text.token) for f in fields])
        if isinstance(text, plan.Prefix):
            return self._prefix(searcher, fields, text.stem)
        if isinstance(text, plan.CharPrefix):
            return self._prefix(searcher, fields, text.char)
        if isinstance(text, plan.Bigrams):
            return self._adjacent(tuple(f for f in fields if f in MAIN), text.tokens)
        if isinstance(text, plan.Sequence):
            if not text.open_end:
                return self._adjacent(fields, text.tokens)
            if len(text.tokens) == 1:
                return self._prefix(searcher, fields, text.tokens[0])
            schema = self._ix.schema
            return self._any(
                [
                    q.boost_query(q.phrase_prefix_query(schema, f, list(text.tokens)), WEIGHT[f])
                    for f in fields
                ]
            )
        if isinstance(text, plan.AnyOf):
            return self._any([self._query(searcher, c, fields) for c in text.children])
        if isinstance(text, plan.AllOf):
            occur = self.tantivy.Occur
            return q.boolean_query(
                [
                    *((occur.Must, self._query(searcher, c, fields)) for c in text.children),
                    *((occur.MustNot, self._query(searcher, e, fields)) for e in text.excluded),
                ]
            )
        return self._query(searcher, text.child, TITLE)

    def _term(self, field: str, token: str) -> Any:
        q = self.tantivy.Query
        return q.boost_query(q.term_query(self._ix.schema, field, token), WEIGHT[field])

    def _any(self, queries: list[Any]) -> Any:
        q = self.tantivy.Query
        if not queries:
            return q.empty_query()
        if len(queries) == 1:
            return queries[0]
        return q.boolean_query([(self.tantivy.Occur.Should, query) for query in queries])

    def _adjacent(self, fields: Iterable[str], tokens: tuple[str, ...]) -> Any:
        """Tokens adjacent and in order (one token: that token) in any of ``fields``."""
        if len(tokens) == 1:  # tantivy's phrase query needs two terms or more
            return self._any([self._term(f, tokens[0]) for f in fields])
        q = self.tantivy.Query
        schema = self._ix.schema
        return self._any(
            [q.boost_query(q.phrase_query(schema, f, list(tokens)), WEIGHT[f]) for f in fields]
        )

    def _prefix(self, searcher: Any, fields: Iterable[str], stem: str) -> Any:
        """Every word starting with ``stem``, from the index's term dictionary: scored as
        terms while a field has at most PREFIX_CAP of them, else matched by a regex."""
        q = self.tantivy.Query
        parts = []
        by_word: dict[str, list[Any]] = {}
        for field in fields:
            words = searcher.terms_with_prefix(field, stem, limit=PREFIX_CAP + 1)
            if len(words) > PREFIX_CAP:
                pattern = _regex_escape(stem) + ".*"
                regex = q.regex_query(self._ix.schema, field, pattern)
                parts.append(q.boost_query(regex, WEIGHT[field]))
            else:
                for word, _ in words:
                    by_word.setdefault(word, []).append(self._term(field, word))
        parts.extend(self._any(queries) for queries in by_word.values())
        return self._any(parts)

    def _score(self, searcher: Any, text: plan.Text) -> list[Any]:
        """What ranks a plan's matches, as FTS5's bm25 does: each term or phrase in it,
        in the one scoring field (see SCORED), summed; exclusions score nothing."""
        q = self.tantivy.Query
        schema = self._ix.schema
        if isinstance(text, plan.Term):
            return [q.term_query(schema, SCORED, text.token)]
        if isinstance(text, plan.Prefix | plan.CharPrefix):
            stem = text.stem if isinstance(text, plan.Prefix) else text.char
            return self._scored_prefix(searcher, stem)
        if isinstance(text, plan.Bigrams | plan.Sequence):
            tokens: list[str | tuple[int, str]] = list(text.tokens)
            if isinstance(text, plan.Sequence) and text.open_end:
                if len(tokens) == 1:
                    return self._scored_prefix(searcher, text.tokens[0])
                return [q.phrase_prefix_query(schema, SCORED, tokens)]
            if len(tokens) == 1:
                return [q.term_query(schema, SCORED, text.tokens[0])]
            return [q.phrase_query(schema, SCORED, tokens)]
        if isinstance(text, plan.AnyOf | plan.AllOf):
            return [part for child in text.children for part in self._score(searcher, child)]
        return self._score(searcher, text.child)

    def _scored_prefix(self, searcher: Any, stem: str) -> list[Any]:
        q = self.tantivy.Query
        schema = self._ix.schema
        words = searcher.terms_with_prefix(SCORED, stem, limit=PREFIX_CAP + 1)
        if len(words) > PREFIX_CAP:
            return [q.regex_query(schema, SCORED, _regex_escape(stem) + ".*")]
        if len(words) < 2:
            return [q.term_query(schema, SCORED, word) for word, _ in words]
        # FTS5 scores a prefix as one phrase: one idf (of the notes holding any of its
        # words) and one saturating count. Summing each word's own score would let a note
        # full of distinct rare words (hystrixcommand, hystrixcommandkey) outrank one
        # about the word typed; so each word is scaled to the union's idf and a note
        # scores its best word only.
        union = q.term_set_query(schema, SCORED, [word for word, _ in words])
        total = searcher.num_docs
        held = searcher.search(union, 1, count=True).count or 1
        shared = _idf(total, held)
        scaled = [
            q.boost_query(q.term_query(schema, SCORED, word), shared / _idf(total, df))
            for word, df in words
        ]
        return [q.disjunction_max_query(scaled, tie_breaker=0.0)]

    def _boost_terms(self, planned: QueryPlan) -> list[Any]:
        q = self.tantivy.Query
        return [q.term_query(self._ix.schema, SCORED, piece) for piece in planned.boosts]

    def _ranked(self, searcher: Any, text: plan.Text, planned: QueryPlan) -> Any:
        """Notes matching ``text`` (in the ten fields), scored in the scoring field, with
        the dictionary words adding to the score."""
        q = self.tantivy.Query
        occur = self.tantivy.Occur
        matching = q.const_score_query(self._query(searcher, text), 0.0)
        scoring = [*self._score(searcher, text), *self._boost_terms(planned)]
        return q.boolean_query([(occur.Must, matching), *((occur.Should, s) for s in scoring)])

    def _within(self, searcher: Any, planned: QueryPlan, query: Any) -> Any:
        """``query`` kept to the notes matching ``planned.within``, which scores nothing."""
        if planned.within is None:
            return query
        q = self.tantivy.Query
        occur = self.tantivy.Occur
        within = q.const_score_query(self._query(searcher, planned.within), 0.0)
        return q.boolean_query([(occur.Must, query), (occur.Must, within)])

    def _among(self, query: Any, ids: Collection[int]) -> Any:
        q = self.tantivy.Query
        occur = self.tantivy.Occur
        among = q.term_set_query(self._ix.schema, "nid", sorted(ids))
        return q.boolean_query([(occur.Must, query), (occur.Must, among)])

    def _hits(self, searcher: Any, query: Any, limit: int) -> list[tuple[int, float]]:
        """(note id, score) of the query's best ``limit`` documents."""
        if limit <= 0:
            return []
        hits = searcher.search(query, limit, count=False).hits
        if not hits:
            return []
        ids = searcher.fast_field_values("nid", [address for _, address in hits])
        return [(int(i), float(score)) for (score, _), i in zip(hits, ids, strict=True)]

    def _all(self, searcher: Any, query: Any) -> set[int]:
        return {i for i, _ in self._hits(searcher, query, max(searcher.num_docs, 1))}

    # -- searching -------------------------------------------------------------------------

    def search_and_titled(
        self, planned: QueryPlan, titles: Text, limit: int
    ) -> tuple[list[EngineHit], list[EngineHit]]:
        return two_searches(self, planned, titles, limit)

    def search(self, query: Query | QueryPlan, limit: int) -> list[EngineHit]:
        planned = query if isinstance(query, QueryPlan) else plan_query(query)
        hits: list[EngineHit] = self._reading(lambda ix: self._search(ix, planned, limit), [])
        known = self.store.notes.titles(hit.note_id for hit in hits)
        if len(known) < len(hits) and self.is_ready():
            # In step with the store, yet naming notes it does not hold: its id field is
            # damaged (without this check every hit would be dropped in silence).
            raise IndexDamaged(self.index.path, "its hits name notes the store does not hold")
        return hits

    def _search(self, ix: Any, planned: QueryPlan, limit: int) -> list[EngineHit]:
        searcher = ix.searcher()
        exact = self.store.notes.ids_titled(planned.title_key)
        if planned.required is not None:
            ranked = self._ranked(searcher, planned.required, planned)
            ranked = self._within(searcher, planned, ranked)
            scores = dict(self._hits(searcher, ranked, limit))
            required = self._query(searcher, planned.required)
            missing = exact - scores.keys()
            if missing:  # a title match ranks first anyway, if it matches at all
                for note_id, _ in self._hits(searcher, self._among(required, missing), limit):
                    scores[note_id] = 0.0
        else:
            matched = self._evaluate(searcher, planned, planned.root)
            if planned.within is not None:
                matched &= self._all(searcher, self._query(searcher, planned.within))
            scores = dict.fromkeys(matched, 0.0)
            ranking = self._ranking(searcher, planned)
            if ranking is not None and matched:
                scores.update(self._hits(searcher, self._among(ranking, matched), limit))
        # Ties (filters alone score nothing) go newest first, then by path, as with FTS5.
        return first_page(self.store, scores, exact, limit)

    def _ranking(self, searcher: Any, planned: QueryPlan) -> Any:
        """Every positive term, whichever of them a note matched, plus the dictionary
        words: what ranks the notes a query with filters matched."""
        parts = [s for t in planned.ranking for s in self._score(searcher, t)]
        parts.extend(self._boost_terms(planned))
        return self._any(parts) if parts else None

    def _evaluate(
        self, searcher: Any, planned: QueryPlan, node: Node, among: set[int] | None = None
    ) -> set[int]:
        """Notes matching a tree that mixes filters with text, as sets of note ids (with
        ``among``, only those of these notes)."""
        text = planned.text_of(node)
        if text is not None:
            query = self._query(searcher, text)
            if among is not None and len(among) <= AMONG_AT_MOST:
                return self._all(searcher, self._among(query, among)) if among else set()
            matched = self._all(searcher, query)
            return matched if among is None else matched & among
        if isinstance(node, Field):
            kept = self.store.notes.filter_ids(node.name, node.value)
            return kept if among is None else kept & among
        if isinstance(node, Word | Phrase):
            return set()
        if isinstance(node, Not):
            everything = set(self.store.notes.all_ids()) if among is None else among
            return everything - self._evaluate(searcher, planned, node.child, everything)
        assert isinstance(node, And | Or)  # every other node is text, a filter or a NOT
        if isinstance(node, Or):
            sets = [self._evaluate(searcher, planned, c, among) for c in node.children]
            return set.union(*sets) if sets else set()
        # AND: filters first (sets from the store), then the words among what they kept,
        # then each NOT takes its notes away: `tag:缓存 -redis` never lists every note.
        order = sorted(node.children, key=lambda c: (isinstance(c, Not), not isinstance(c, Field)))
        found: set[int] | None = among
        for child in order:
            if isinstance(child, Not) and found is not None:
                found = found - self._evaluate(searcher, planned, child.child, found)
            else:
                found = self._evaluate(searcher, planned, child, found)
            if not found:
                return set()
        return found if found is not None else set()

    def count(self, text: plan.Text, cap: int) -> int:
        """How many notes match ``text``, counted up to ``cap`` (tantivy counts all: its
        count walks posting lists in Rust, cheaper than a capped walk in Python)."""

        def counted(ix: Any) -> int:
            searcher = ix.searcher()
            found = searcher.search(self._query(searcher, text), 1, count=True).count
            return min(int(found or 0), cap)

        return int(self._reading(counted, 0))

    def holders(self, text: plan.Text, among: Collection[int]) -> set[int]:
        """Which of the notes ``among`` match ``text``."""
        if not among:
            return set()

        def matching(ix: Any) -> set[int]:
            searcher = ix.searcher()
            query = self._among(self._query(searcher, text), among)
            return {i for i, _ in self._hits(searcher, query, len(among))}

        return set(self._reading(matching, set()))

    def more_like_this(
        self, note_id: int, document: SearchDocument, limit: int = 30
    ) -> list[SimilarNote]:
        counts = document_terms(document)
        if not counts:
            return []
        return self._reading(lambda ix: self._more_like_this(ix, note_id, counts, limit), [])

    def _more_like_this(self, ix: Any, note_id: int, counts: Any, limit: int) -> list[SimilarNote]:
        searcher = ix.searcher()

        def word(term: str) -> Any:
            # A Chinese word is its bigrams adjacent, in any field, as FTS5 matches it.
            return self._adjacent(FIELDS, tuple(index_tokens(term)))

        def frequency(term: str, cap: int) -> int:
            return int(searcher.search(word(term), 1, count=True).count or 0)

        def holders(term: str) -> Iterable[int]:
            return self._all(searcher, word(term))

        total = self.store.notes.count()
        return more_like_this(note_id, counts, total, frequency, holders, limit)


def _idf(total: int, held: int) -> float:
    """BM25's idf as tantivy computes it."""
    return math.log(1 + (total - held + 0.5) / (held + 0.5))


_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$#&-~")


def _regex_escape(text: str) -> str:
    return "".join("\\" + ch if ch in _REGEX_SPECIAL else ch for ch in text)


class TantivyEntry(SyncedEntry):
    name = "tantivy"
    package = PACKAGE
    engine = TantivyEngine
    index = TantivyIndex


ENGINE = TantivyEntry()
