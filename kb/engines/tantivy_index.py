"""The tantivy engine's index: its schema, its state and its writer (kb.engines.tantivy
reads it). The index commits after the store: it records the store generation it reflects
in a meta document committed with the notes' documents (tantivy's commit is one atomic
rename of ``meta.json``), and ``TantivyIndex.sync`` brings a lagging index up to date from
the store's per-note generations and tombstones. A rebuild is made in a new folder and
swapped in.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kb.engines import contract, synced
from kb.engines.synced import Package, Streams, Target, note_streams, rebuild_beside
from kb.errors import KbError, StoreError, os_error_message
from kb.words.streams import MARKS, STREAMS, TITLE_STREAMS

if TYPE_CHECKING:
    from kb.store import Store


FOLDER = "tantivy"
SCHEMA_VERSION = "3"  # 3: the marks field
FIELDS = STREAMS  # one field per stream, as FTS5 has one column per stream
# FTS5's column weights (kb.engines.fts5.WEIGHTS), as boosts of each field's BM25.
WEIGHT = dict(zip(FIELDS, (10.0, 5.0, 8.0, 4.0, 3.0, 1.5, 1.0, 0.5, 0.5, 0.25, 0.0), strict=True))
# FTS5's bm25 weighs a word's count in each column and saturates the sum, with one idf
# over the whole note; tantivy's scores are per field (a word rare in headings gets a large
# idf there). So notes are also indexed into one field, ``all``, that only scores: each
# stream repeated as often as its FTS5 weight (rounded, at least once: the half-weight
# side streams count as much as the body), which gives FTS5's weighted counts, one idf
# and one length per note. The ten fields only match. Measured on the relevance
# benchmark: per-field scores lost 0.1 of nDCG@5 on identifiers; twice the weights
# (saturating sooner) lost 0.02 of MRR on mismatched-language queries.
SCORED = "all"
# The marks (kb.words.streams.MARKS) only match: they are not in ``all``.
_REPEAT = {f: 0 if f == MARKS else max(1, round(w)) for f, w in WEIGHT.items()}
MAIN = tuple(f for f in FIELDS if not f.endswith("_x") and f != MARKS)
TITLE = TITLE_STREAMS
PREFIX_CAP = 200  # words a prefix is scored by in one field; past that, a regex matches
# The writer's memory (for its one thread; tantivy asks at least 15 MB a thread).
WRITER_HEAP = 32_000_000
# Notes read and indexed at a time; a rebuild commits each batch (1,000 notes: peak 135 MB
# in batches of 1,000, 111 MB in batches of 200).
BATCH = 500
_META = "meta"  # the term of the one document holding the index's state
_STORED = "the notes are stored, and the next 'kb ingest' brings the tantivy index up to date"
# How tantivy words a full disk or quota (Rust's io::Error, ENOSPC is os error 28).
_DISK_FULL = ("no space left", "os error 28", "quota exceeded", "os error 122")
# Free space below which a writer thread that died is taken to have found the disk full:
# a segment being written holds up to the writer's heap.
_LOW_SPACE = 4 * WRITER_HEAP


PACKAGE = Package("tantivy", "tantivy", "tantivy", "tantivy")
available = PACKAGE.available
require = PACKAGE.require


def _schema() -> Any:
    import tantivy  # the engine's own module: loaded only when tantivy is the engine

    builder = tantivy.SchemaBuilder()
    builder.add_unsigned_field("nid", indexed=True, fast=True)
    builder.add_text_field("kind", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("state", stored=True, tokenizer_name="raw", index_option="basic")
    for name in (*FIELDS, SCORED):  # kb has tokenized already: split on whitespace only
        builder.add_text_field(name, tokenizer_name="whitespace", index_option="position")
    return builder.build()


class IndexDamaged(contract.IndexDamaged):
    """The tantivy index cannot be read: it is derived, so it is rebuilt, never repaired."""

    engine = "tantivy"


def guarded(path: Path, action: Callable[[], Any]) -> Any:
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
        require()
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

        return guarded(self.path, opened)

    def state(self, index: Any = None) -> tuple[int, str] | None:
        """(store generation the index reflects, its signature), None if no index;
        IndexDamaged if it cannot be read."""
        if index is None:
            if not self.exists():
                return None
            index = self.open()
        return guarded(self.path, lambda: _read_state(index))

    def sync(self, store: Store, streams: Streams | None = None, rebuild: bool = False) -> int:
        """Bring the index to the store's generation; returns how many notes it wrote."""
        for leftover in (FOLDER + ".new", FOLDER + ".old"):  # a killed rebuild's (ingest
            shutil.rmtree(self.path.with_name(leftover), ignore_errors=True)  # is locked)
        signature = synced.index_signature("tantivy", SCHEMA_VERSION)
        try:
            return synced.sync(self, store, streams, rebuild, signature)
        except OSError as exc:
            raise StoreError(f"{os_error_message(exc, self.path)}; {_STORED}") from exc
        except ValueError as exc:  # tantivy's io::Error (a full disk) comes as ValueError
            raise self.unwritten(exc) from exc

    def unwritten(self, exc: ValueError) -> KbError:
        """tantivy's failure to write, as one line. A full disk says "No space left on
        device" in one thread, and "An index writer was killed" in the next call, which
        does not say why: then the free space tells."""
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        lowered = text.lower()
        full = any(word in lowered for word in _DISK_FULL)
        if not full and "writer was killed" in lowered:
            with contextlib.suppress(OSError):
                full = shutil.disk_usage(self.path.parent).free < _LOW_SPACE
        if full:
            return StoreError(
                f"disk full: cannot write the tantivy index {self.path}; free some space "
                f"and run 'kb ingest' again ({_STORED})"
            )
        return StoreError(f"cannot write the tantivy index {self.path} ({text}); {_STORED}")

    def catch_up(self, target: Target, changed: list[int], removed: list[int]) -> int:
        return self._write(self.open(), target, changed, removed)

    def rebuild(self, target: Target) -> int:
        """Build the index in a new folder and swap it in; a failed build leaves nothing."""
        import tantivy  # the engine's own module: loaded only when tantivy is the engine

        def build(fresh: Path) -> int:
            index = tantivy.Index(_schema(), path=str(fresh))
            ids = target.store.notes.all_ids()
            return self._write(index, target, ids, [], fresh=True)

        return rebuild_beside(self.path, build)

    def _write(
        self,
        index: Any,
        target: Target,
        changed: Sequence[int],
        removed: Sequence[int],
        fresh: bool = False,
    ) -> int:
        import tantivy  # the engine's own module: loaded only when tantivy is the engine

        try:
            # One indexing thread: Python making the documents is the bottleneck, and a
            # second thread only held more memory (10,000 notes rebuilt: 34.5 s and 168 MB
            # peak with one, 39.4 s and 231 MB with two, on 2 cores).
            writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
        except ValueError as exc:
            if "lock" in str(exc).lower():
                raise KbError(
                    f"the tantivy index in {self.path} is locked by another writer"
                ) from exc
            if any(word in str(exc).lower() for word in _DISK_FULL):
                raise  # sync says "disk full"
            raise IndexDamaged(self.path, exc) from exc
        unique = list(dict.fromkeys(changed))  # each note once: never twice per batch
        try:
            if not fresh:
                # The segments of a write that failed (a full disk) stay on disk until a
                # commit collects them; collected first, the space they hold is free again.
                writer.garbage_collect_files()
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
                for note_id, columns in note_streams(target.store, chunk, target.streams):
                    writer.add_document(_document(tantivy, note_id, columns))
            writer.delete_documents_by_query(tantivy.Query.term_query(index.schema, "kind", _META))
            meta = tantivy.Document()
            meta.add_text("kind", _META)
            meta.add_text(
                "state",
                json.dumps({"generation": target.generation, "signature": target.signature}),
            )
            writer.add_document(meta)
            writer.commit()  # atomic: the notes' documents and the state, or neither
            writer.wait_merging_threads()
        except BaseException:
            with contextlib.suppress(Exception):  # the original error is the one to report
                writer.rollback()
                writer.garbage_collect_files()  # the failed write's files
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
