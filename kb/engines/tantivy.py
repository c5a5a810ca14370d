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

import contextlib
import json
import math
import os
import shutil
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.engines.contract import (
    EngineEntry,
    EngineHit,
    SimilarNote,
    document_terms,
    index_tokens,
    more_like_this,
)
from kb.errors import KbError, StoreError, os_error_message
from kb.query import plan
from kb.query.plan import QueryPlan, document_streams, plan_query
from kb.query.syntax import And, Field, Node, Not, Or, Phrase, Query, Word

if TYPE_CHECKING:
    from kb.engines.fts5 import DroppedFts5
    from kb.ingest.documents import SearchDocument
    from kb.store import Store

FOLDER = "tantivy"
SCHEMA_VERSION = "2"
FIELDS = plan.STREAMS  # one field per stream, as FTS5 has one column per stream
# FTS5's column weights (kb.engines.fts5.WEIGHTS), as boosts of each field's BM25.
_WEIGHT = dict(zip(FIELDS, (10.0, 5.0, 8.0, 4.0, 3.0, 1.5, 1.0, 0.5, 0.5, 0.25), strict=True))
# FTS5's bm25 weighs a word's count in each column and saturates the sum, with one idf
# over the whole note; tantivy's scores are per field (a word rare in headings gets a large
# idf there). So notes are also indexed into one field, ``all``, that only scores: each
# stream repeated as often as its FTS5 weight (rounded, at least once: the half-weight
# side streams count as much as the body), which gives FTS5's weighted counts, one idf
# and one length per note. The ten fields only match. Measured on the relevance
# benchmark: per-field scores lost 0.1 of nDCG@5 on identifiers; twice the weights
# (saturating sooner) lost 0.02 of MRR on mismatched-language queries.
SCORED = "all"
_REPEAT = {f: max(1, round(w)) for f, w in _WEIGHT.items()}
MAIN = tuple(f for f in FIELDS if not f.endswith("_x"))
TITLE = plan.TITLE_STREAMS
PREFIX_CAP = 200  # words a prefix is scored by in one field; past that, a regex matches
# The writer's memory: tantivy splits it between its threads (at least 15 MB each).
WRITER_HEAP = 32_000_000
# Notes read and indexed at a time; a rebuild commits each batch (1,000 notes: peak 135 MB
# in batches of 1,000, 111 MB in batches of 200).
BATCH = 500
_META = "meta"  # the term of the one document holding the index's state


def _signature() -> str:
    return f"tantivy {SCHEMA_VERSION}; {plan.tokenizer_signature()}"


def available() -> bool:
    try:
        import tantivy  # noqa: F401
    except ImportError:
        return False
    return True


def _require() -> None:
    if not available():
        raise KbError("the tantivy engine needs tantivy: pip install 'kb-notes[tantivy]'")


def _schema() -> Any:
    import tantivy  # the engine's own module: loaded only when tantivy is the engine

    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("nid", indexed=True, fast=True)
    builder.add_text_field("kind", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("state", stored=True, tokenizer_name="raw", index_option="basic")
    for name in (*FIELDS, SCORED):  # kb has tokenized already: split on whitespace only
        builder.add_text_field(name, tokenizer_name="whitespace", index_option="position")
    return builder.build()


class IndexDamaged(StoreError):
    """The tantivy index cannot be read: it is derived, so it is rebuilt, never repaired."""

    def __init__(self, path: Path, cause: BaseException | str) -> None:
        if isinstance(cause, BaseException):
            first = str(cause).splitlines()[0] if str(cause) else ""
            cause = f"{type(cause).__name__}: {first}"
        super().__init__(
            f"the tantivy index in {path} is damaged ({cause}); 'kb ingest --rebuild' rebuilds it"
        )


def _guarded(path: Path, action: Callable[[], Any]) -> Any:
    """Run a read of the index; anything tantivy raises (ValueError, OSError, or a Rust
    panic, which pyo3 raises as a BaseException) names the index and the repair."""
    try:
        return action()
    except (KbError, KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        raise IndexDamaged(path, exc) from exc


class TantivyIndex:
    """The writer side: kept in step with the store after each store commit."""

    def __init__(self, index_dir: Path) -> None:
        _require()
        self.path = index_dir / FOLDER

    def exists(self) -> bool:
        return (self.path / "meta.json").is_file()

    def open(self) -> Any:
        """The index; IndexDamaged when its files cannot be read."""
        import tantivy  # the engine's own module: loaded only when tantivy is the engine

        def opened() -> Any:
            index = tantivy.Index.open(str(self.path))
            index.config_reader(reload_policy="Manual")  # no watcher thread: kb reopens
            return index

        return _guarded(self.path, opened)

    def state(self, index: Any = None) -> tuple[int, str] | None:
        """(store generation the index reflects, its signature), None if no index;
        IndexDamaged if it cannot be read."""
        if index is None:
            if not self.exists():
                return None
            index = self.open()
        return _guarded(self.path, lambda: _read_state(index))

    def sync(
        self, store: Store, streams: dict[int, tuple[str, ...]] | None = None, rebuild: bool = False
    ) -> int:
        """Bring the index to the store's generation; returns how many notes it wrote."""
        streams = streams or {}
        target = store.generation
        for leftover in (FOLDER + ".new", FOLDER + ".old"):  # a killed rebuild's (ingest
            shutil.rmtree(self.path.with_name(leftover), ignore_errors=True)  # is locked)
        try:
            state = self.state()
        except IndexDamaged:
            state = None  # derived data: an index that cannot be read is made again
        signature = f"{_signature()}; store {store.meta.store_id}"
        if rebuild or state is None or state[1] != signature or state[0] > target:
            # Also when the store is not the one this index was built from (it was deleted
            # and made again: its generations restarted), or when it is behind the index.
            return self._rebuild(store, streams, target, signature)
        current = state[0]
        if current == target:
            return 0
        changed, removed = store.notes.changes_since(current)
        try:
            index = self.open()
            return self._write(index, store, changed, removed, streams, target, signature)
        except OSError as exc:
            raise StoreError(
                f"{os_error_message(exc, self.path)}; the notes are stored, and the next "
                "'kb ingest' brings the tantivy index up to date"
            ) from exc

    def _rebuild(
        self, store: Store, streams: dict[int, tuple[str, ...]], target: int, signature: str
    ) -> int:
        """Build the index in a new folder and swap it in; a failed build leaves nothing."""
        import tantivy  # the engine's own module: loaded only when tantivy is the engine

        fresh = self.path.with_name(FOLDER + ".new")
        shutil.rmtree(fresh, ignore_errors=True)
        try:
            fresh.mkdir(parents=True)
            index = tantivy.Index(_schema(), path=str(fresh))
            ids = store.notes.all_ids()
            written = self._write(index, store, ids, [], streams, target, signature, fresh=True)
        except BaseException as exc:
            shutil.rmtree(fresh, ignore_errors=True)
            if isinstance(exc, OSError):
                raise StoreError(os_error_message(exc, fresh)) from exc
            raise
        old = self.path.with_name(FOLDER + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if self.path.exists():
            self.path.rename(old)
        fresh.rename(self.path)
        shutil.rmtree(old, ignore_errors=True)
        return written

    def _write(
        self,
        index: Any,
        store: Store,
        changed: Sequence[int],
        removed: Sequence[int],
        streams: dict[int, tuple[str, ...]],
        generation: int,
        signature: str,
        fresh: bool = False,
    ) -> int:
        import tantivy  # the engine's own module: loaded only when tantivy is the engine

        try:
            threads = 2 if len(changed) > 1000 and (os.cpu_count() or 1) > 1 else 1
            writer = index.writer(heap_size=WRITER_HEAP, num_threads=threads)
        except ValueError as exc:
            if "lock" in str(exc).lower():
                raise KbError(
                    f"the tantivy index in {self.path} is locked by another writer"
                ) from exc
            raise IndexDamaged(self.path, exc) from exc
        unique = list(dict.fromkeys(changed))  # each note once: never twice per batch
        try:
            gone = sorted({*removed, *unique}) if not fresh else []
            if gone:  # by query: delete_documents_by_term does not match an integer field
                writer.delete_documents_by_query(
                    tantivy.Query.term_set_query(index.schema, "nid", gone)
                )
            for start in range(0, len(unique), BATCH):
                if fresh and start:
                    # tantivy queues up to 10,000 documents for its indexing threads; a new
                    # index (unseen until swapped in) commits each batch to bound that.
                    writer.commit()
                chunk = unique[start : start + BATCH]
                missing = [i for i in chunk if i not in streams]
                documents = dict(store.notes.search_documents(missing)) if missing else {}
                for note_id in chunk:
                    columns = streams.get(note_id)
                    if columns is None:
                        if note_id not in documents:
                            continue  # removed meanwhile
                        columns = document_streams(documents[note_id])
                    writer.add_document(_document(tantivy, note_id, columns))
            writer.delete_documents_by_query(tantivy.Query.term_query(index.schema, "kind", _META))
            meta = tantivy.Document()
            meta.add_text("kind", _META)
            meta.add_text("state", json.dumps({"generation": generation, "signature": signature}))
            writer.add_document(meta)
            writer.commit()  # atomic: the notes' documents and the state, or neither
            writer.wait_merging_threads()
        except BaseException:
            with contextlib.suppress(Exception):  # the original error is the one to report
                writer.rollback()
            raise
        return len(unique)


def _document(tantivy: Any, note_id: int, columns: tuple[str, ...]) -> Any:
    document = tantivy.Document()
    document.add_unsigned("nid", note_id)
    for name, text in zip(FIELDS, columns, strict=True):
        if text:
            document.add_text(name, text)
            for _ in range(_REPEAT[name]):  # separate values: no phrase runs across them
                document.add_text(SCORED, text)
    return document


def _read_state(index: Any) -> tuple[int, str]:
    import tantivy  # the engine's own module: loaded only when tantivy is the engine

    searcher = index.searcher()
    query = tantivy.Query.term_query(index.schema, "kind", _META)
    hits = searcher.search(query, 1).hits
    if not hits:
        return 0, ""
    (state,) = searcher.doc(hits[0][1]).get_all("state")
    facts = json.loads(state)
    return int(facts["generation"]), str(facts["signature"])


class TantivyEngine:
    name = "tantivy"

    def __init__(self, index_dir: Path, store: Store) -> None:
        _require()
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
            self._ix = self.index.open()
            self._stamp = stamp
        return self._ix

    def _reading(self, action: Callable[[Any], Any], default: Any) -> Any:
        index = self._open()
        if index is None:
            return default
        return _guarded(self.index.path, lambda: action(index))

    def is_ready(self) -> bool:
        index = self._open()
        if index is None:
            return False
        state = self.index.state(index)
        return (
            state is not None
            and state[0] == self.store.generation
            and state[1].startswith(f"tantivy {SCHEMA_VERSION}; {plan.query_signature()};")
            and state[1].endswith(f"; store {self.store.meta.store_id}")
        )

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
                    q.boost_query(q.phrase_prefix_query(schema, f, list(text.tokens)), _WEIGHT[f])
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
        return q.boost_query(q.term_query(self._ix.schema, field, token), _WEIGHT[field])

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
            [q.boost_query(q.phrase_query(schema, f, list(tokens)), _WEIGHT[f]) for f in fields]
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
                parts.append(q.boost_query(regex, _WEIGHT[field]))
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
            scores = dict(self._hits(searcher, ranked, limit))
            required = self._query(searcher, planned.required)
            missing = exact - scores.keys()
            if missing:  # a title match ranks first anyway, if it matches at all
                for note_id, _ in self._hits(searcher, self._among(required, missing), limit):
                    scores[note_id] = 0.0
        else:
            matched = self._evaluate(searcher, planned, planned.root)
            scores = dict.fromkeys(matched, 0.0)
            ranking = self._ranking(searcher, planned)
            if ranking is not None and matched:
                scores.update(self._hits(searcher, self._among(ranking, matched), limit))
        # Ties (filters alone score nothing) go newest first, then by path, as with FTS5.
        dated = (
            self.store.notes.dates_and_paths(scores)
            if len(set(scores.values())) < len(scores)
            else {}
        )
        ordered = sorted(
            scores,
            key=lambda i: (
                i not in exact,
                -scores[i],
                _newest_first(dated.get(i, ("", ""))[0]),
                dated.get(i, ("", ""))[1],
            ),
        )
        return [EngineHit(i, scores[i]) for i in ordered[:limit]]

    def _ranking(self, searcher: Any, planned: QueryPlan) -> Any:
        """Every positive term, whichever of them a note matched, plus the dictionary
        words: what ranks the notes a query with filters matched."""
        parts = [s for t in planned.ranking for s in self._score(searcher, t)]
        parts.extend(self._boost_terms(planned))
        return self._any(parts) if parts else None

    def _evaluate(self, searcher: Any, planned: QueryPlan, node: Node) -> set[int]:
        """Notes matching a tree that mixes filters with text, as sets of note ids."""
        text = planned.text_of(node)
        if text is not None:
            return self._all(searcher, self._query(searcher, text))
        if isinstance(node, Field):
            return self.store.notes.filter_ids(node.name, node.value)
        if isinstance(node, Word | Phrase):
            return set()
        if isinstance(node, Not):
            everything = set(self.store.notes.all_ids())
            return everything - self._evaluate(searcher, planned, node.child)
        assert isinstance(node, And | Or)  # every other node is text, a filter or a NOT
        sets = [self._evaluate(searcher, planned, c) for c in node.children]
        if isinstance(node, And):
            return set.intersection(*sets) if sets else set()
        return set.union(*sets) if sets else set()

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


def _newest_first(date: str | None) -> tuple[int, list[int]]:
    """A sort key that puts later ISO dates first and undated notes last."""
    if not date:
        return (1, [])
    return (0, [-ord(ch) for ch in date])


class TantivyEntry(EngineEntry):
    """An index in its own folder, brought up to date after each store commit."""

    name = "tantivy"
    in_store = False

    def reader(self, index_dir: Path, store: Store) -> TantivyEngine:
        return TantivyEngine(index_dir, store)

    def writer(self, store: Store) -> DroppedFts5:
        # The store keeps no FTS5 index meanwhile; a switch back to FTS5 rebuilds it.
        _require()  # before the store is written: choosing tantivy without it says so
        from kb.engines.fts5 import DroppedFts5

        return DroppedFts5(store)

    def after_commit(
        self,
        index_dir: Path,
        store: Store,
        streams: dict[int, tuple[str, ...]] | None,
        rebuild: bool,
    ) -> None:
        # After the store's commit: a crash between the two leaves the index behind, and
        # the next ingest catches it up from the store's generations.
        TantivyIndex(index_dir).sync(store, streams, rebuild)


ENGINE = TantivyEntry()
