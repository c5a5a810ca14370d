"""The default engine: SQLite FTS5 in the store's own database, written in the same
transaction as the notes, so the store and the index can never disagree.

Text is tokenized by kb (``kb.words.tokenize``) before it reaches FTS5; FTS5's own tokenizer
is set to split on whitespace only, so every kb token is one FTS5 token. The table is
contentless (the notes table already holds the text): to remove a note, kb rebuilds its
old tokens from the store, which is exact as long as the tokenizer is unchanged. The
tokenizer's signature is recorded, and a change rebuilds the index.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from pathlib import Path

from kb.engines.contract import (
    EngineEntry,
    EngineHit,
    SimilarNote,
    two_searches,
)
from kb.engines.similar import document_terms, index_tokens, more_like_this
from kb.errors import StoreError
from kb.query import plan
from kb.query.plan import QueryPlan, plan_query
from kb.query.syntax import And, Field, Node, Not, Phrase, Query, Word
from kb.store import Store, filter_clause
from kb.words.documents import SearchDocument
from kb.words.streams import (
    MARKS,
    SIDE_STREAMS,
    STREAMS,
    TITLE_STREAMS,
    document_streams,
    query_signature,
    tokenizer_signature,
)
from kb.words.tokenize import STRADDLE_MARK

TABLE = "note_fts"
COLUMNS = tuple(s for s in STREAMS if s != MARKS)  # one column per stream
# The straddle marks (kb.words.streams.MARKS) have a table of their own: FTS5's bm25 divides
# by a row's length over all its columns, so in a column of note_fts, even unweighted, they
# would move every score (microservice.yaml's second page on jekyll-blog-zh).
MARKS_TABLE = "note_marks"
_MARKS_AT = STREAMS.index(MARKS)
# Title, aliases and tags outrank headings, which outrank body and code; the side streams
# (parts, single characters, dictionary words) count half of their main stream.
WEIGHTS = (10.0, 5.0, 8.0, 4.0, 3.0, 1.5, 1.0, 0.5, 0.5, 0.25)
_WEIGHTS_SQL = ", ".join(str(w) for w in WEIGHTS)
SIDE_COLUMNS = "{" + " ".join(SIDE_STREAMS) + "}"
TITLE_COLUMNS = "{" + " ".join(TITLE_STREAMS) + "}"
_TOKENIZE = "tokenize=\"unicode61 remove_diacritics 0 categories 'L* N* Co M* P* S*'\""
_DDL = (
    f"CREATE VIRTUAL TABLE {TABLE} USING fts5({', '.join(COLUMNS)}, content='', {_TOKENIZE})",
    f"CREATE VIRTUAL TABLE {TABLE}_vocab USING fts5vocab({TABLE}, 'row')",
    f"CREATE VIRTUAL TABLE {MARKS_TABLE} USING fts5({MARKS}, content='', {_TOKENIZE})",
)
_META_SIGNATURE = "fts5_signature"
_META_GENERATION = "fts5_generation"


class Fts5Writer:
    """Keeps the FTS5 index in step with the store, inside the store's transaction."""

    def __init__(self, store: Store) -> None:
        self.conn = store.conn
        self.meta = store.meta

    def prepare(self) -> bool:
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)
        ).fetchone()
        if exists and self.meta.get(_META_SIGNATURE) == tokenizer_signature():
            return False
        _drop_tables(self.conn)
        for statement in _DDL:
            self.conn.execute(statement)
        self.meta.set(_META_SIGNATURE, tokenizer_signature())
        return True

    def clear(self) -> None:
        self.conn.execute(f"INSERT INTO {TABLE}({TABLE}) VALUES ('delete-all')")
        self.conn.execute(f"INSERT INTO {MARKS_TABLE}({MARKS_TABLE}) VALUES ('delete-all')")

    def add(self, note_id: int, streams: tuple[str, ...]) -> None:
        placeholders = ", ".join("?" for _ in COLUMNS)
        columns, marks = _split(streams)
        self.conn.execute(
            f"INSERT INTO {TABLE}(rowid, {', '.join(COLUMNS)}) VALUES (?, {placeholders})",
            (note_id, *columns),
        )
        if marks:
            self.conn.execute(
                f"INSERT INTO {MARKS_TABLE}(rowid, {MARKS}) VALUES (?, ?)", (note_id, marks)
            )

    def delete(self, documents: list[tuple[int, SearchDocument]]) -> None:
        placeholders = ", ".join("?" for _ in COLUMNS)
        for note_id, document in documents:
            columns, marks = _split(document_streams(document))
            self.conn.execute(
                f"INSERT INTO {TABLE}({TABLE}, rowid, {', '.join(COLUMNS)}) "
                f"VALUES ('delete', ?, {placeholders})",
                (note_id, *columns),
            )
            if marks:
                self.conn.execute(
                    f"INSERT INTO {MARKS_TABLE}({MARKS_TABLE}, rowid, {MARKS}) "
                    "VALUES ('delete', ?, ?)",
                    (note_id, marks),
                )

    def mark_synced(self, generation: int) -> None:
        self.meta.set(_META_GENERATION, str(generation))


class DroppedFts5:
    """Another engine is in use: the FTS5 tables are dropped (a later switch back to FTS5
    rebuilds them from the store), and nothing is written to them."""

    def __init__(self, store: Store) -> None:
        self.conn = store.conn
        self.meta = store.meta

    def prepare(self) -> bool:
        _drop_tables(self.conn)
        self.meta.delete(_META_SIGNATURE, _META_GENERATION)
        return False  # nothing to fill: the other engine keeps its own index

    def clear(self) -> None:
        pass

    def add(self, note_id: int, streams: tuple[str, ...]) -> None:
        pass

    def delete(self, documents: list[tuple[int, SearchDocument]]) -> None:
        pass

    def mark_synced(self, generation: int) -> None:
        pass


# -- searching ----------------------------------------------------------------------


def _split(streams: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """A document's streams as note_fts's columns and its marks."""
    return streams[:_MARKS_AT] + streams[_MARKS_AT + 1 :], streams[_MARKS_AT]


def _drop_tables(conn: sqlite3.Connection) -> None:
    for name in (f"{TABLE}_vocab", TABLE, MARKS_TABLE):
        conn.execute(f"DROP TABLE IF EXISTS {name}")


def _is_mark(text: plan.Text) -> bool:
    """A straddle mark: a term of the marks table (``holders`` is how they are asked)."""
    return isinstance(text, plan.Term) and text.token.startswith(STRADDLE_MARK)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def match_expression(text: plan.Text) -> str:
    """A plan in FTS5's MATCH syntax. Every stream is a column, so a term matches in any
    column unless the plan names some."""
    if isinstance(text, plan.Term):
        return _quote(text.token)
    if isinstance(text, plan.Prefix):
        return _quote(text.stem) + "*"
    if isinstance(text, plan.CharPrefix):
        return _quote(text.char) + "*"
    if isinstance(text, plan.Bigrams):
        return _quote(" ".join(text.tokens))
    if isinstance(text, plan.Sequence):
        return _quote(" ".join(text.tokens)) + ("*" if text.open_end else "")
    if isinstance(text, plan.AnyOf):
        return "(" + " OR ".join(match_expression(c) for c in text.children) + ")"
    if isinstance(text, plan.AllOf):
        parts = [match_expression(c) for c in text.children]
        expression = parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"
        if not text.excluded:
            return expression
        excluded = "".join(f" NOT {match_expression(e)}" for e in text.excluded)
        return f"({expression}{excluded})"
    return f"{TITLE_COLUMNS} : ({match_expression(text.child)})"


def _within(planned: QueryPlan, column: str) -> tuple[str, tuple[str, ...]]:
    """The clause keeping the matches to notes matching ``planned.within``, and its
    parameter; a separate MATCH, so bm25 still scores the query alone. On the FTS5 table
    the column is ``+rowid``: a plain ``rowid IN`` is handed to FTS5 as a constraint and
    each note is matched again on its own, bm25's statistics with it (6 s for a common
    word at 10,000 notes, against 0.04 s as a filter over the one match)."""
    if planned.within is None:
        return "", ()
    clause = f" AND {column} IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?)"
    return clause, (match_expression(planned.within),)


class _SqlBuilder:
    """Compiles a query tree to a WHERE clause over ``notes n``."""

    def __init__(self, planned: QueryPlan) -> None:
        self.planned = planned
        self.params: list[object] = []

    def build(self, node: Node) -> str:
        text = self.planned.text_of(node)
        expression = match_expression(text) if text is not None else None
        if expression is not None:
            self.params.append(expression)
            return f"n.id IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?)"
        if isinstance(node, Word | Phrase):
            return "0"  # nothing searchable in it (only punctuation)
        if isinstance(node, Field):
            return self.field(node)
        if isinstance(node, Not):
            return f"NOT ({self.build(node.child)})"
        joiner = " AND " if isinstance(node, And) else " OR "
        return "(" + joiner.join(self.build(c) for c in node.children) + ")"

    def field(self, node: Field) -> str:
        sql, params = filter_clause(node.name, node.value)
        self.params.extend(params)
        return sql


class Fts5Engine:
    name = "fts5"

    def __init__(self, store: Store) -> None:
        self.conn = store.conn
        self.meta = store.meta

    def is_ready(self) -> bool:
        signature, generation, synced = self.meta.get_many(
            _META_SIGNATURE, "generation", _META_GENERATION
        )
        # The rjieba version is not compared here: looking it up costs ~25 ms of start-up,
        # and a new dictionary only changes ranking; the next ingest re-indexes for it.
        return (signature or "").startswith(query_signature() + ";") and generation == synced

    def search(self, query: Query | QueryPlan, limit: int) -> list[EngineHit]:
        planned = query if isinstance(query, QueryPlan) else plan_query(query)
        try:
            if planned.required is not None:
                return self._search_text(planned, match_expression(planned.required), limit)
            return self._search_general(planned, limit)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                self._missing_index()
                return []
            raise

    def _missing_index(self) -> None:
        """No index table: right for a store with no notes yet; with notes, it is damaged
        (the answer would be "no notes match", which is not true)."""
        has_notes = self.conn.execute("SELECT EXISTS (SELECT 1 FROM notes)").fetchone()[0]
        if has_notes:
            raise StoreError(
                "the store is damaged: its search index table is missing; run 'kb ingest --rebuild'"
            )

    def _search_text(self, planned: QueryPlan, required: str, limit: int) -> list[EngineHit]:
        """Words, phrases and title filters only: one FTS5 query ranks and limits."""
        within, params = _within(planned, "+rowid")
        rows = self.conn.execute(
            f"SELECT rowid, -bm25({TABLE}, {_WEIGHTS_SQL}) AS score FROM {TABLE} "
            f"WHERE {TABLE} MATCH ?{within} ORDER BY score DESC LIMIT ?",
            (_scored_expression(planned, required), *params, limit),
        ).fetchall()
        hits = [EngineHit(int(row[0]), float(row[1])) for row in rows]
        return _titled_first(hits, self._titled_as_query(planned, required), limit)

    def _titled_as_query(self, planned: QueryPlan, required: str) -> set[int]:
        """The notes matching ``required`` whose title is the query: they come first, even
        when bm25 put them past the limit. The few notes so titled are looked up by rowid:
        a broad query's every match (an OR of common words matches nearly all notes) is
        never listed."""
        exact = self.conn.execute(
            f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ? AND rowid IN "
            f"(SELECT id FROM notes WHERE lower(title) = ?)",
            (required, planned.title_key),
        ).fetchall()
        return {int(row[0]) for row in exact}

    def search_and_titled(
        self, planned: QueryPlan, titles: plan.Text, limit: int
    ) -> tuple[list[EngineHit], list[EngineHit]]:
        """The best matches and the best of those whose title holds the words, from one
        pass: the matches are scored once (bm25 over every match is most of a query's
        cost) and both pages are cut from them, as two searches would."""
        if planned.required is None or planned.within is not None:
            return two_searches(self, planned, titles, limit)
        required = match_expression(planned.required)
        try:
            rows = self.conn.execute(
                f"WITH scored AS MATERIALIZED (SELECT rowid AS id, "
                f"-bm25({TABLE}, {_WEIGHTS_SQL}) AS score FROM {TABLE} WHERE {TABLE} MATCH ?) "
                "SELECT * FROM (SELECT id, score, 0 FROM scored ORDER BY score DESC LIMIT ?) "
                "UNION ALL SELECT * FROM (SELECT id, score, 1 FROM scored WHERE +id IN "
                f"(SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?) ORDER BY score DESC LIMIT ?)",
                (_scored_expression(planned, required), limit, match_expression(titles), limit),
            ).fetchall()
            exact = self._titled_as_query(planned, required)
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                self._missing_index()
                return [], []
            raise
        best = [EngineHit(int(row[0]), float(row[1])) for row in rows if not row[2]]
        titled = [EngineHit(int(row[0]), float(row[1])) for row in rows if row[2]]
        return _titled_first(best, exact, limit), _titled_first(titled, exact, limit)

    def _search_general(self, planned: QueryPlan, limit: int) -> list[EngineHit]:
        """Filters, and NOT or OR mixed with them: a WHERE clause over notes."""
        builder = _SqlBuilder(planned)
        where = builder.build(planned.root)
        ranking = _ranking(planned)
        params: list[object] = []
        if ranking:
            rank_join = (
                f"LEFT JOIN (SELECT rowid, bm25({TABLE}, {_WEIGHTS_SQL}) AS score "
                f"FROM {TABLE} WHERE {TABLE} MATCH ?) r ON r.rowid = n.id"
            )
            params.append(ranking)
            score = "coalesce(-r.score, 0)"
        else:
            rank_join, score = "", "0"
        params.extend(builder.params)
        within, within_params = _within(planned, "n.id")
        params.extend([*within_params, planned.title_key, limit])
        sql = (
            f"SELECT n.id, {score} AS score FROM notes n {rank_join} WHERE {where}{within} "
            f"ORDER BY (lower(n.title) = ?) DESC, score DESC, n.date DESC, n.path "
            f"LIMIT ?"
        )
        rows = self.conn.execute(sql, params).fetchall()
        return [EngineHit(int(row[0]), float(row[1])) for row in rows]

    def count(self, text: plan.Text, cap: int) -> int:
        """How many notes match ``text``, counted up to ``cap``."""
        try:
            (found,) = self.conn.execute(
                f"SELECT count(*) FROM (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ? LIMIT ?)",
                (match_expression(text), cap),
            ).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                self._missing_index()
                return 0
            raise
        return int(found)

    def holders(self, text: plan.Text, among: Collection[int]) -> set[int]:
        """Which of the notes ``among`` match ``text``."""
        expression = match_expression(text)
        table = MARKS_TABLE if _is_mark(text) else TABLE
        try:
            # One full match, kept to the notes asked about inside SQLite (``+rowid``: not
            # handed to FTS5 as a constraint). Looked up note by note instead, FTS5 matches
            # the whole expression again for each: 60 candidates took 68 ms for an OR of
            # three words, 88 ms for a Chinese phrase and 2.8 s for `pyt*` at 10,000 notes,
            # against 2.9, 0.3 and 3 ms for the one match; and no note is listed in Python.
            rows = self.conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? "
                "AND +rowid IN (SELECT value FROM json_each(?))",
                (expression, json.dumps(list(among))),
            )
            return {int(row[0]) for row in rows}
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return set()
            raise

    def more_like_this(
        self, note_id: int, document: SearchDocument, limit: int = 30
    ) -> list[SimilarNote]:
        """Notes sharing this document's most distinctive terms: (note, 0..1, terms)."""
        counts = document_terms(document)
        if not counts:
            return []
        total = int(self.conn.execute("SELECT count(*) FROM notes").fetchone()[0])
        return more_like_this(note_id, counts, total, self._frequency, self._holders, limit)

    def _frequency(self, term: str, cap: int) -> int:
        # LIMIT stops early: fts5vocab would walk a common word's whole posting list.
        (count,) = self.conn.execute(
            f"SELECT count(*) FROM (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ? LIMIT ?)",
            (_quote(" ".join(index_tokens(term))), cap + 1),
        ).fetchone()
        return int(count)

    def _holders(self, term: str) -> Iterable[int]:
        rows = self.conn.execute(
            f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH ?",
            (_quote(" ".join(index_tokens(term))),),
        )
        return (row[0] for row in rows)


def _scored_expression(planned: QueryPlan, required: str) -> str:
    """What bm25 scores: R AND (R OR boosts) matches exactly what R matches; bm25 also
    weighs the boosts. Without boosts R alone ranks the same (bm25 sums over phrases, and
    R's positive phrases would only count twice) at half the cost: every phrase is scored
    per hit."""
    return f"{required} AND ({_ranking(planned)})" if planned.boosts else required


def _titled_first(hits: list[EngineHit], first: set[int], limit: int) -> list[EngineHit]:
    """``hits`` with the notes titled as the query in front (unscored if bm25 left them out)."""
    if first:
        kept = [h for h in hits if h.note_id in first] or [EngineHit(i, 0.0) for i in first]
        hits = kept + [h for h in hits if h.note_id not in first]
    return hits[:limit]


def _ranking(planned: QueryPlan) -> str:
    """Every positive term, whichever of them a note matched, plus the dictionary words a
    Chinese term may be, matched only in the side columns (optional boosts)."""
    parts = [match_expression(t) for t in planned.ranking]
    if planned.boosts:
        parts.append(f"{SIDE_COLUMNS} : ({' OR '.join(_quote(p) for p in planned.boosts)})")
    return " OR ".join(parts)


class Fts5Entry(EngineEntry):
    """The default engine: its index is part of the store."""

    name = "fts5"
    in_store = True

    def reader(self, index_dir: Path, store: Store) -> Fts5Engine:
        return Fts5Engine(store)

    def writer(self, store: Store) -> Fts5Writer:
        return Fts5Writer(store)


ENGINE = Fts5Entry()
