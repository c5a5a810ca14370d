"""The second engine: a whoosh-reloaded index in ``index/whoosh/``, same query meaning.

Documents reach whoosh already tokenized by kb (the same ``main``/``side`` streams FTS5
gets), so the schema's analyzer only splits on spaces: whoosh pickles no kb class in its
schema, and opening the index never imports rjieba. The index commits after the store;
it records the store generation it reflects, and ``WhooshIndex.sync`` brings a lagging
index up to date from the store's per-note generations and tombstones.
"""

from __future__ import annotations

import difflib
import math
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.engines import EngineHit
from kb.engines.fts5 import COLUMNS, WEIGHTS, document_streams, document_terms
from kb.errors import KbError
from kb.query import And, Field, Node, Not, Or, Phrase, Query, Word
from kb.tokenize import cjk_bigrams, latin_parts, normalise, segments

if TYPE_CHECKING:
    from kb.store import Store

FOLDER = "whoosh"
META_KEY = "__meta__"
PREFIX_CAP = 200  # terms a prefix may expand to in one field: `r*` must not take seconds
WRITER_TIMEOUT = 10.0
SIDE = tuple(c for c in COLUMNS if c.endswith("_x"))
TITLE = ("title", "title_x")
_WEIGHT = dict(zip(COLUMNS, WEIGHTS, strict=True))


def available() -> bool:
    try:
        import whoosh  # noqa: F401
    except ImportError:
        return False
    return True


def _require() -> None:
    if not available():
        raise KbError("the whoosh engine needs whoosh-reloaded: pip install 'kb-notes[whoosh]'")


def _schema() -> Any:
    from whoosh import fields
    from whoosh.analysis import SpaceSeparatedTokenizer

    tokens = SpaceSeparatedTokenizer()  # kb has tokenized already: split on spaces only
    text = {c: fields.TEXT(analyzer=tokens, phrase=True) for c in COLUMNS}
    return fields.Schema(
        key=fields.ID(unique=True),
        nid=fields.NUMERIC(stored=True, sortable=True),
        generation=fields.NUMERIC(stored=True),
        signature=fields.STORED(),
        **text,
    )


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
        _require()
        self.path = index_dir / FOLDER

    def exists(self) -> bool:
        from whoosh import index

        return self.path.is_dir() and index.exists_in(str(self.path))

    def state(self) -> tuple[int, str] | None:
        """(store generation the index reflects, tokenizer signature), None if no index."""
        if not self.exists():
            return None
        from whoosh import index

        ix = _retry(lambda: index.open_dir(str(self.path)))
        with ix.searcher() as searcher:
            fields = searcher.document(key=META_KEY)
        if not fields:
            return 0, ""
        return int(fields["generation"]), str(fields.get("signature", ""))

    def sync(
        self, store: Store, streams: dict[int, tuple[str, ...]] | None = None, rebuild: bool = False
    ) -> int:
        """Bring the index to the store's generation; returns how many notes it wrote.

        A rebuild (or a missing index) is built in a new folder and swapped in, so a
        reader never sees a half-built index."""
        from kb.engines import fts5

        streams = streams or {}
        target = store.generation
        state = self.state()
        if rebuild or state is None or state[1] != fts5.tokenizer_signature():
            fresh = self.path.with_name(FOLDER + ".new")
            shutil.rmtree(fresh, ignore_errors=True)
            fresh.mkdir(parents=True)
            from whoosh import index

            ix = index.create_in(str(fresh), _schema())
            written = self._write(ix, store, store.all_ids(), [], streams, target)
            old = self.path.with_name(FOLDER + ".old")
            shutil.rmtree(old, ignore_errors=True)
            if self.path.exists():
                self.path.rename(old)
            fresh.rename(self.path)
            shutil.rmtree(old, ignore_errors=True)
            return written
        current = state[0]
        if current == target:
            return 0
        changed, removed = store.changes_since(current)
        from whoosh import index

        ix = _retry(lambda: index.open_dir(str(self.path)))
        return self._write(ix, store, changed, removed, streams, target)

    def _write(
        self,
        ix: Any,
        store: Store,
        changed: list[int],
        removed: list[int],
        streams: dict[int, tuple[str, ...]],
        generation: int,
    ) -> int:
        from whoosh.writing import LockError

        try:
            # One writer at a time; segments stay separate files (not compound), which
            # opens faster than reading whole compound files into memory.
            writer = ix.writer(timeout=WRITER_TIMEOUT, compound=False, limitmb=256)
        except LockError as exc:
            raise KbError(f"the whoosh index in {self.path} is locked by another writer") from exc
        try:
            for note_id in removed:
                writer.delete_by_term("key", str(note_id))
            missing = [i for i in dict.fromkeys(changed) if i not in streams]
            documents = dict(store.search_documents(missing))
            for note_id in dict.fromkeys(changed):  # each note once: never twice per batch
                columns = streams.get(note_id)
                if columns is None:
                    if note_id not in documents:
                        continue
                    columns = document_streams(documents[note_id])
                writer.update_document(
                    key=str(note_id), nid=note_id, **dict(zip(COLUMNS, columns, strict=True))
                )
            from kb.engines import fts5

            writer.update_document(
                key=META_KEY, generation=generation, signature=fts5.tokenizer_signature()
            )
            writer.commit(merge=True)
        except BaseException:
            writer.cancel()
            raise
        return len(changed)


class WhooshEngine:
    name = "whoosh"

    def __init__(self, index_dir: Path, store: Store) -> None:
        _require()
        self.index = WhooshIndex(index_dir)
        self.store = store
        self._ix: Any = None

    def _open(self) -> Any:
        if self._ix is None:
            if not self.index.exists():
                return None
            from whoosh import index

            self._ix = _retry(lambda: index.open_dir(str(self.index.path)))
        return self._ix

    def is_ready(self) -> bool:
        from kb.engines import fts5

        state = self.index.state()
        return (
            state is not None
            and state[0] == self.store.generation
            and state[1].startswith(fts5.query_signature() + ";")
        )

    # -- compiling the query tree -------------------------------------------------------

    def _terms(self, reader: Any, fields: Iterable[str], token: str, prefix: bool) -> Any:
        from whoosh.query import NullQuery, Or, Term

        if not prefix:
            return Or([Term(f, token, boost=_WEIGHT[f]) for f in fields])
        expanded = []
        for field in fields:
            for count, term in enumerate(reader.expand_prefix(field, token)):
                if count >= PREFIX_CAP:
                    break
                word = term.decode("utf-8") if isinstance(term, bytes) else term
                expanded.append(Term(field, word, boost=_WEIGHT[field]))
        return Or(expanded) if expanded else NullQuery

    def _phrase(self, fields: Iterable[str], tokens: list[str]) -> Any:
        from whoosh.query import Or, Phrase, Term

        if len(tokens) == 1:
            return Or([Term(f, tokens[0], boost=_WEIGHT[f]) for f in fields])
        return Or([Phrase(f, tokens, boost=_WEIGHT[f]) for f in fields])

    def _word(self, reader: Any, text: str, prefix: bool, fields: tuple[str, ...]) -> Any:
        from whoosh.query import And, Or

        parts = []
        runs = list(segments(text))
        for index, run in enumerate(runs):
            if run.kind == "cjk":
                if len(run.text) == 1:  # the first of a bigram, a lone run, or a run's last
                    parts.append(self._terms(reader, fields, run.text, prefix=True))
                else:
                    parts.append(self._phrase(fields, cjk_bigrams(run.text)))
                continue
            whole = normalise(run.text)
            if prefix and index == len(runs) - 1:
                parts.append(self._terms(reader, fields, whole, prefix=True))
                continue
            pieces = [normalise(p) for p in latin_parts(run.text)]
            exact = self._terms(reader, fields, whole, prefix=False)
            parts.append(Or([exact, self._phrase(fields, pieces)]) if len(pieces) > 1 else exact)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else And(parts)

    def _phrase_query(self, reader: Any, text: str, fields: tuple[str, ...]) -> Any:
        from whoosh.query import Or, Prefix, Sequence, Term

        runs = list(segments(text))
        tokens: list[str] = []
        for run in runs:
            tokens.extend(cjk_bigrams(run.text) if run.kind == "cjk" else [normalise(run.text)])
        if not tokens:
            return None
        if runs[-1].kind == "cjk" and len(runs[-1].text) == 1:
            # a phrase ending in one Chinese character: it starts the next bigram
            return Or(
                [
                    Sequence([*(Term(f, t) for t in tokens[:-1]), Prefix(f, tokens[-1])])
                    for f in fields
                ]
            )
        return self._phrase(fields, tokens)

    def _text(self, reader: Any, node: Node) -> Any:
        """A whoosh query for words, phrases and title filters (None for anything else)."""
        from whoosh.query import And as WAnd
        from whoosh.query import AndNot
        from whoosh.query import Or as WOr

        if isinstance(node, Word):
            return self._word(reader, node.text, node.prefix, COLUMNS)
        if isinstance(node, Phrase):
            return self._phrase_query(reader, node.text, COLUMNS)
        if isinstance(node, Field) and node.name == "title":
            if node.phrase:
                return self._phrase_query(reader, node.value, TITLE)
            words = [self._word(reader, w, False, TITLE) for w in node.value.split()]
            words = [w for w in words if w is not None]
            return WAnd(words) if words else None
        if isinstance(node, Or):
            parts = [self._text(reader, c) for c in node.children]
            return None if any(p is None for p in parts) else WOr(parts)
        if isinstance(node, And):
            positive = [self._text(reader, c) for c in node.children if not isinstance(c, Not)]
            negative = [self._text(reader, c.child) for c in node.children if isinstance(c, Not)]
            if not positive or any(p is None for p in positive + negative):
                return None
            query = WAnd(positive) if len(positive) > 1 else positive[0]
            for part in negative:
                query = AndNot(query, part)
            return query
        return None

    def _ranking(self, reader: Any, query: Query) -> Any:
        from whoosh.query import Or, Term

        terms = query.positive_terms()
        parts = [q for q in (self._text(reader, t) for t in terms) if q is not None]
        for piece in query.dictionary_pieces():  # dictionary words: optional boosts
            parts.append(Or([Term(f, piece, boost=_WEIGHT[f]) for f in SIDE]))
        return Or(parts) if parts else None

    # -- searching -------------------------------------------------------------------------

    def search(self, query: Query, limit: int) -> list[EngineHit]:
        ix = self._open()
        if ix is None:
            return []
        return _retry(lambda: self._search(ix, query, limit))

    def _search(self, ix: Any, query: Query, limit: int) -> list[EngineHit]:
        from whoosh.query import And as WAnd

        with ix.searcher() as searcher:
            reader = searcher.reader()
            ids = reader.column_reader("nid")
            required = self._text(reader, query.root)
            ranking = self._ranking(reader, query)
            if required is not None:
                scored = WAnd([required, ranking]) if ranking is not None else required
                hits = searcher.search(scored, limit=None)
                scores = {int(ids[h.docnum]): float(h.score) for h in hits}
            else:
                matched = self._evaluate(searcher, ids, query.root)
                scores = dict.fromkeys(matched, 0.0)
                if ranking is not None:
                    for hit in searcher.search(ranking, limit=None):
                        note_id = int(ids[hit.docnum])
                        if note_id in scores:
                            scores[note_id] = float(hit.score)
        exact = self.store.ids_titled(query.title_key())
        ordered = sorted(scores, key=lambda i: (i not in exact, -scores[i], i))
        return [EngineHit(i, scores[i]) for i in ordered[:limit]]

    def _evaluate(self, searcher: Any, ids: Any, node: Node) -> set[int]:
        """Notes matching a tree that mixes filters with text, as sets of note ids."""
        text = self._text(searcher.reader(), node)
        if text is not None:
            return {int(ids[d]) for d in searcher.docs_for_query(text)}
        if isinstance(node, Field):
            return self.store.filter_ids(node.name, node.value)
        if isinstance(node, Word | Phrase):
            return set()
        if isinstance(node, Not):
            return set(self.store.all_ids()) - self._evaluate(searcher, ids, node.child)
        sets = [self._evaluate(searcher, ids, c) for c in node.children]  # type: ignore[union-attr]
        if isinstance(node, And):
            return set.intersection(*sets) if sets else set()
        return set.union(*sets) if sets else set()

    def more_like_this(
        self, note_id: int, document: Any, limit: int = 30
    ) -> list[tuple[int, float, list[str]]]:
        ix = self._open()
        if ix is None:
            return []
        counts = document_terms(document)
        if not counts:
            return []
        total = max(self.store.count_notes(), 1)
        cap = max(20, int(total * 0.05))
        with ix.searcher() as searcher:
            reader = searcher.reader()
            ids = reader.column_reader("nid")
            frequencies: dict[str, int] = {}
            postings: dict[str, set[int]] = {}
            for term, _ in counts.most_common(100):
                docs = set()
                for field in COLUMNS:
                    if reader.doc_frequency(field, term):
                        docs.update(reader.postings(field, term).all_ids())
                    if len(docs) > cap:
                        break
                if docs:
                    frequencies[term] = len(docs)
                    postings[term] = docs
            weights = {
                t: (1 + math.log(counts[t])) * math.log(total / df)
                for t, df in frequencies.items()
                if 1 < df <= cap
            }
            top = sorted(weights, key=lambda t: (-weights[t], t))[:12]
            scores: Counter[int] = Counter()
            matched: dict[int, list[str]] = {}
            for term in top:
                idf = math.log(total / frequencies[term])
                for docnum in postings[term]:
                    other = int(ids[docnum])
                    if other != note_id:
                        scores[other] += idf
                        matched.setdefault(other, []).append(term)
        best = sum(math.log(total / frequencies[t]) for t in top) or 1.0
        return [
            (other, score / best, matched[other][:3]) for other, score in scores.most_common(limit)
        ]

    def vocabulary_near(self, word: str, limit: int) -> list[str]:
        ix = self._open()
        term = normalise(word)
        if ix is None or len(term) < 3:
            return []
        with ix.searcher() as searcher:
            words = {
                w.decode("utf-8") if isinstance(w, bytes) else w
                for w in searcher.reader().expand_prefix("body", term[0])
            }
        return difflib.get_close_matches(term, sorted(words), n=limit, cutoff=0.75)
