"""The second engine: a whoosh-reloaded index in ``index/whoosh/``, same query meaning.

Documents reach whoosh already tokenized by kb (the same ``main``/``side`` streams FTS5
gets), so the schema's analyzer only splits on spaces: whoosh pickles no kb class in its
schema, and opening the index never imports rjieba. The index commits after the store;
it records the store generation it reflects, and ``WhooshIndex.sync`` brings a lagging
index up to date from the store's per-note generations and tombstones.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.engines import contract, synced
from kb.engines.contract import EngineHit, SimilarNote, first_page, two_searches
from kb.engines.similar import document_terms, index_tokens, more_like_this
from kb.engines.synced import (
    Package,
    Streams,
    SyncedEntry,
    Target,
    note_streams,
    rebuild_beside,
)
from kb.errors import KbError, StoreError, os_error_message
from kb.query import plan
from kb.query.plan import QueryPlan, Text, plan_query
from kb.query.syntax import And, Field, Node, Not, Or, Phrase, Query, Word
from kb.words.streams import MARKS, STREAMS

if TYPE_CHECKING:
    from kb.store import Store
    from kb.words.documents import SearchDocument

FOLDER = "whoosh"
META_KEY = "__meta__"
PREFIX_CAP = 200  # terms a prefix may expand to in one field: `r*` must not take seconds
WRITER_TIMEOUT = 10.0
# whoosh's matchers are pure Python and their cost grows with the fields a query spans, so
# kb's ten streams go into six fields: title (alone, for `title:`), head (aliases, tags,
# headings) and body (text and code), each with its main and side stream. A separator token
# that kb's tokenizer never produces keeps phrases from running across the parts.
FIELDS = ("title", "title_x", "head", "head_x", "body", "body_x", MARKS)
_SOURCES = {"title": ("title",), "head": ("meta", "headings"), "body": ("body", "code")}
_SEPARATOR = " \u241e "
SIDE = tuple(f for f in FIELDS if f.endswith("_x"))
_MAIN = ("title", "head", "body")  # the fields holding bigrams
TITLE = ("title", "title_x")
_WEIGHT = {"title": 10.0, "title_x": 5.0, "head": 5.0, "head_x": 2.5, "body": 1.0, "body_x": 0.5}
_WEIGHT[MARKS] = 0.0  # the straddle marks only match (kb.words.streams.MARKS)
SCHEMA_VERSION = "3"  # 3: the marks field


def whoosh_fields(streams: tuple[str, ...]) -> dict[str, str]:
    """kb's streams (see kb.words.streams.STREAMS) as the whoosh fields: ten in six, and
    the marks."""
    by_column = dict(zip(STREAMS, streams, strict=True))
    fields = {}
    for field, columns in _SOURCES.items():
        fields[field] = _SEPARATOR.join(by_column[c] for c in columns)
        fields[f"{field}_x"] = _SEPARATOR.join(by_column[f"{c}_x"] for c in columns)
    fields[MARKS] = by_column[MARKS]
    return fields


PACKAGE = Package("whoosh", "whoosh", "whoosh-reloaded", "whoosh")
available = PACKAGE.available


def _schema() -> Any:
    from whoosh import fields  # deferred: loads whoosh
    from whoosh.analysis import SpaceSeparatedTokenizer  # deferred: loads whoosh

    tokens = SpaceSeparatedTokenizer()  # kb has tokenized already: split on spaces only
    text = {f: fields.TEXT(analyzer=tokens, phrase=True) for f in FIELDS}
    return fields.Schema(
        key=fields.ID(unique=True),
        nid=fields.NUMERIC(stored=True, sortable=True),
        generation=fields.NUMERIC(stored=True),
        signature=fields.STORED(),
        **text,
    )


class IndexDamaged(contract.IndexDamaged):
    """The whoosh index cannot be read: it is derived, so it is rebuilt, never repaired."""

    engine = "whoosh"


def _retry(action: Callable[[], Any], attempts: int = 5) -> Any:
    """Readers retry when a commit replaces files under them (FileNotFoundError on a TOC)."""
    for attempt in range(attempts):
        try:
            return action()
        except FileNotFoundError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))
    return None


class WhooshIndex:
    """The writer side: kept in step with the store after each store commit."""

    def __init__(self, index_dir: Path) -> None:
        PACKAGE.require()
        self.path = index_dir / FOLDER

    def exists(self) -> bool:
        from whoosh import index  # deferred: loads whoosh

        if not self.path.is_dir():
            return False
        try:
            return index.exists_in(str(self.path))
        except Exception:
            return True  # an index that cannot be read: opening it says so

    def open(self) -> Any:
        """The index for reading; IndexDamaged when its files cannot be read. Any error
        counts: whoosh reports a truncated or garbled file as whatever its parser hit."""
        from whoosh import index  # deferred: loads whoosh

        try:
            return _retry(lambda: index.open_dir(str(self.path), readonly=True))
        except Exception as exc:
            raise IndexDamaged(self.path, exc) from exc

    def state(self) -> tuple[int, str] | None:
        """(store generation the index reflects, tokenizer signature), None if no index;
        IndexDamaged if it cannot be read."""
        if not self.exists():
            return None
        ix = self.open()
        try:
            with ix.searcher() as searcher:
                fields = searcher.document(key=META_KEY)
            if not fields:
                return 0, ""
            return int(fields["generation"]), str(fields.get("signature", ""))
        except Exception as exc:
            raise IndexDamaged(self.path, exc) from exc

    def sync(self, store: Store, streams: Streams | None = None, rebuild: bool = False) -> int:
        """Bring the index to the store's generation; returns how many notes it wrote.

        A rebuild (or a missing index) is built in a new folder and swapped in, so a
        reader never sees a half-built index."""
        signature = synced.index_signature("whoosh", SCHEMA_VERSION)
        return synced.sync(self, store, streams, rebuild, signature)

    def catch_up(self, target: Target, changed: list[int], removed: list[int]) -> int:
        from whoosh import index  # deferred: loads whoosh

        ix = _retry(lambda: index.open_dir(str(self.path)))
        try:
            return self._write(ix, target, changed, removed)
        except OSError as exc:
            raise StoreError(
                f"{os_error_message(exc, self.path)}; the notes are stored, and the next "
                "'kb ingest' brings the whoosh index up to date"
            ) from exc

    def rebuild(self, target: Target) -> int:
        """Build the index in a new folder and swap it in; a failed build leaves nothing."""

        def build(fresh: Path) -> int:
            from whoosh import index  # deferred: loads whoosh

            ix = index.create_in(str(fresh), _schema())
            return self._write(ix, target, target.store.notes.all_ids(), [])

        return rebuild_beside(self.path, build)

    def _write(self, ix: Any, target: Target, changed: list[int], removed: list[int]) -> int:
        from whoosh.writing import LockError  # deferred: loads whoosh

        try:
            # One writer at a time; segments stay separate files (not compound), which
            # opens faster than reading whole compound files into memory.
            writer = ix.writer(timeout=WRITER_TIMEOUT, compound=False, limitmb=128)
        except LockError as exc:
            raise KbError(f"the whoosh index in {self.path} is locked by another writer") from exc
        try:
            for note_id in removed:
                writer.delete_by_term("key", str(note_id))
            unique = list(dict.fromkeys(changed))  # each note once: never twice per batch
            for note_id, columns in note_streams(target.store, unique, target.streams):
                writer.update_document(key=str(note_id), nid=note_id, **whoosh_fields(columns))

            writer.update_document(
                key=META_KEY, generation=target.generation, signature=target.signature
            )
            writer.commit(merge=True)
        except BaseException:
            writer.cancel()
            raise
        return len(changed)


class WhooshEngine:
    name = "whoosh"

    def __init__(self, index_dir: Path, store: Store) -> None:
        PACKAGE.require()
        self.index = WhooshIndex(index_dir)
        self.store = store
        self._ix: Any = None

    def _open(self) -> Any:
        if self._ix is None:
            if not self.index.exists():
                return None
            self._ix = self.index.open()
        return self._ix

    def _reading(self, action: Callable[[], Any]) -> Any:
        """Run a read of the index; a file that turns out damaged mid-read says so.
        One retry only: whoosh's reader already retries a file a commit replaced (ten
        times, 50 ms apart), so five of ours made a missing segment file wait 3 s."""
        try:
            return _retry(action, attempts=2)
        except KbError:
            raise
        except Exception as exc:
            raise IndexDamaged(self.index.path, exc) from exc

    def is_ready(self) -> bool:
        return synced.in_step(self.index.state(), self.store, "whoosh", SCHEMA_VERSION)

    # -- translating the query plan ----------------------------------------------------

    def _query(self, reader: Any, text: plan.Text, fields: tuple[str, ...] = FIELDS) -> Any:
        """A plan as a whoosh query over ``fields`` (all of them, or the title's)."""
        from whoosh import query as wq  # deferred: loads whoosh

        if isinstance(text, plan.Term):
            return wq.Or([wq.Term(f, text.token, boost=_WEIGHT[f]) for f in fields])
        if isinstance(text, plan.Prefix | plan.CharPrefix):
            return _term_set(reader, fields, text)
        if isinstance(text, plan.Bigrams):
            return _adjacent(tuple(f for f in fields if f in _MAIN), text.tokens)
        if isinstance(text, plan.Sequence):
            if not text.open_end:
                return _adjacent(fields, text.tokens)
            *head, last = text.tokens
            return wq.Or(
                [wq.Sequence([*(wq.Term(f, t) for t in head), wq.Prefix(f, last)]) for f in fields]
            )
        if isinstance(text, plan.AnyOf):
            return wq.Or([self._query(reader, c, fields) for c in text.children])
        if isinstance(text, plan.AllOf):
            # And + Not rather than AndNot: whoosh-reloaded 2.7.5's AndNot matcher lets the
            # first positive document through when the negative list starts earlier.
            return wq.And(
                [
                    *(self._query(reader, c, fields) for c in text.children),
                    *(wq.Not(self._query(reader, e, fields)) for e in text.excluded),
                ]
            )
        return self._query(reader, text.child, TITLE)

    def _text(self, reader: Any, planned: QueryPlan, node: Node) -> Any:
        """A whoosh query for words, phrases and title filters (None for anything else)."""
        text = planned.text_of(node)
        return self._query(reader, text) if text is not None else None

    def _boosts(self, reader: Any, planned: QueryPlan) -> Any:
        from whoosh.query import Or, Term  # deferred: loads whoosh

        if not planned.boosts:
            return None
        return Or([Term(f, piece, boost=_WEIGHT[f]) for piece in planned.boosts for f in SIDE])

    def _ranking(self, reader: Any, planned: QueryPlan) -> Any:
        from whoosh.query import Or, Term  # deferred: loads whoosh

        parts = [self._query(reader, t) for t in planned.ranking]
        for piece in planned.boosts:  # dictionary words: optional boosts
            parts.append(Or([Term(f, piece, boost=_WEIGHT[f]) for f in SIDE]))
        return Or(parts) if parts else None

    # -- searching -------------------------------------------------------------------------

    def search_and_titled(
        self, planned: QueryPlan, titles: Text, limit: int
    ) -> tuple[list[EngineHit], list[EngineHit]]:
        return two_searches(self, planned, titles, limit)

    def search(self, query: Query | QueryPlan, limit: int) -> list[EngineHit]:
        ix = self._open()
        if ix is None:
            return []
        planned = query if isinstance(query, QueryPlan) else plan_query(query)
        hits: list[EngineHit] = self._reading(lambda: self._search(ix, planned, limit))
        known = self.store.notes.titles(hit.note_id for hit in hits)
        if len(known) < len(hits) and self.is_ready():
            # In step with the store, yet naming notes it does not hold: its id column is
            # damaged (without this check every hit would be dropped in silence).
            raise IndexDamaged(self.index.path, "its hits name notes the store does not hold")
        return hits

    def _search(self, ix: Any, planned: QueryPlan, limit: int) -> list[EngineHit]:
        from whoosh.query import And as WAnd  # deferred: loads whoosh
        from whoosh.query import AndMaybe, Term  # deferred: loads whoosh

        exact = self.store.notes.ids_titled(planned.title_key)
        with ix.searcher() as searcher:
            reader = searcher.reader()
            ids = reader.column_reader("nid")
            if planned.required is not None:
                required = self._query(reader, planned.required)
                # Required terms rank; dictionary words only add to the score (AndMaybe).
                boosts = self._boosts(reader, planned)
                scored = AndMaybe(required, boosts) if boosts is not None else required
                # A filter matches without scoring: the query's own scores, as FTS5's.
                within = None if planned.within is None else self._query(reader, planned.within)
                found = searcher.search(scored, limit=limit, filter=within)
                scores = {int(ids[h.docnum]): float(h.score) for h in found}
                for note_id in exact - scores.keys():  # a title match ranks first anyway
                    if searcher.search(WAnd([required, Term("key", str(note_id))]), limit=1):
                        scores[note_id] = 0.0
            else:
                matched = self._evaluate(searcher, ids, planned, planned.root)
                if planned.within is not None:
                    within = searcher.docs_for_query(self._query(reader, planned.within))
                    matched &= {int(ids[d]) for d in within}
                scores = dict.fromkeys(matched, 0.0)
                ranking = self._ranking(reader, planned)
                if ranking is not None:
                    for hit in searcher.search(ranking, limit=None):
                        note_id = int(ids[hit.docnum])
                        if note_id in scores:
                            scores[note_id] = float(hit.score)
        # Ties (filters alone score nothing) go newest first, then by path, as with FTS5.
        return first_page(self.store, scores, exact, limit)

    def _evaluate(self, searcher: Any, ids: Any, planned: QueryPlan, node: Node) -> set[int]:
        """Notes matching a tree that mixes filters with text, as sets of note ids."""
        text = self._text(searcher.reader(), planned, node)
        if text is not None:
            return {int(ids[d]) for d in searcher.docs_for_query(text)}
        if isinstance(node, Field):
            return self.store.notes.filter_ids(node.name, node.value)
        if isinstance(node, Word | Phrase):
            return set()
        if isinstance(node, Not):
            everything = set(self.store.notes.all_ids())
            return everything - self._evaluate(searcher, ids, planned, node.child)
        assert isinstance(node, And | Or)  # every other node is text, a filter or a NOT
        sets = [self._evaluate(searcher, ids, planned, c) for c in node.children]
        if isinstance(node, And):
            return set.intersection(*sets) if sets else set()
        return set.union(*sets) if sets else set()

    def count(self, text: plan.Text, cap: int) -> int:
        """How many notes match ``text``, counted up to ``cap``."""
        ix = self._open()
        if ix is None:
            return 0

        def counted() -> int:
            with ix.searcher() as searcher:
                found = 0
                for _ in searcher.docs_for_query(self._query(searcher.reader(), text)):
                    found += 1
                    if found >= cap:
                        break
                return found

        return int(self._reading(counted))

    def holders(self, text: plan.Text, among: Collection[int]) -> set[int]:
        """Which of the notes ``among`` match ``text``."""
        ix = self._open()
        if ix is None:
            return set()
        wanted = set(among)

        def matching() -> set[int]:
            with ix.searcher() as searcher:
                ids = searcher.reader().column_reader("nid")
                query = self._query(searcher.reader(), text)
                return {int(ids[d]) for d in searcher.docs_for_query(query)} & wanted

        return set(self._reading(matching))

    def more_like_this(
        self, note_id: int, document: SearchDocument, limit: int = 30
    ) -> list[SimilarNote]:
        ix = self._open()
        counts = document_terms(document)
        if ix is None or not counts:
            return []
        return self._reading(lambda: self._more_like_this(ix, note_id, counts, limit))

    def _more_like_this(self, ix: Any, note_id: int, counts: Any, limit: int) -> list[SimilarNote]:
        with ix.searcher() as searcher:
            reader = searcher.reader()
            ids = reader.column_reader("nid")

            def notes_with(term: str, cap: int) -> set[int]:
                # A Chinese word is its bigrams, here all in one field: near enough to
                # FTS5's phrase for counting and scoring, without reading positions.
                docs: set[int] = set()
                for field in FIELDS:
                    if len(docs) > cap:
                        break
                    in_field: set[int] | None = None
                    for token in index_tokens(term):
                        if not reader.doc_frequency(field, token):
                            in_field = set()
                            break
                        ids_now = set(reader.postings(field, token).all_ids())
                        in_field = ids_now if in_field is None else in_field & ids_now
                    docs.update(in_field or ())
                return docs

            def holders(term: str) -> Iterable[int]:
                return (int(ids[d]) for d in notes_with(term, total))

            total = self.store.notes.count()
            return more_like_this(
                note_id, counts, total, lambda t, cap: len(notes_with(t, cap)), holders, limit
            )


def _term_set(reader: Any, fields: Iterable[str], text: plan.Prefix | plan.CharPrefix) -> Any:
    """A prefix or a lone Chinese character as one constant-score set of notes (TermSet):
    it only asks "holds a word starting so", and an Or of its hundreds of scored terms
    made whoosh's pure-Python matchers take seconds (`存` 4.9 s, as a set 145 ms)."""
    from whoosh.query import NullQuery  # deferred: loads whoosh

    from kb.engines.whoosh_queries import TermSet  # deferred: loads whoosh

    if isinstance(text, plan.Prefix):
        words = [(f, w) for f in fields for w in _expand(reader, f, text.stem, PREFIX_CAP)]
    else:
        # Bigrams (main fields) start with the character; a run's last character is a side
        # token. Uncapped: a character starts a bounded number of bigrams, and capping
        # would lose notes.
        words = [
            (f, w)
            for f in fields
            for w in ([text.char] if f.endswith("_x") else _expand(reader, f, text.char, None))
        ]
    return TermSet(words, _WEIGHT) if words else NullQuery


def _expand(reader: Any, field: str, prefix: str, cap: int | None) -> list[str]:
    """The field's words that start with ``prefix``, at most ``cap`` of them."""
    words: list[str] = []
    for term in reader.expand_prefix(field, prefix):
        if cap is not None and len(words) >= cap:
            break
        words.append(term.decode("utf-8") if isinstance(term, bytes) else term)
    return words


def _adjacent(fields: Iterable[str], tokens: tuple[str, ...]) -> Any:
    """Tokens adjacent and in order (one token: that token) in any of ``fields``."""
    from whoosh import query as wq  # deferred: loads whoosh

    if len(tokens) == 1:
        return wq.Or([wq.Term(f, tokens[0], boost=_WEIGHT[f]) for f in fields])
    return wq.Or([wq.Phrase(f, list(tokens), boost=_WEIGHT[f]) for f in fields])


class WhooshEntry(SyncedEntry):
    name = "whoosh"
    package = PACKAGE
    engine = WhooshEngine
    index = WhooshIndex


ENGINE = WhooshEntry()
